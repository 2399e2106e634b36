package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/app/api"
)

// FuzzParseOrder: the order decoder never panics, refuses with a message, and
// what it accepts holds exactly product_id and count, each once, which plain
// encoding/json reads back to the same values.
// Run with `make fuzz` or `go test -fuzz=FuzzParseOrder ./internal/app/api/`.
func FuzzParseOrder(f *testing.F) {
	for _, tt := range strictOrderCases {
		f.Add([]byte(tt.body))
	}
	for _, s := range []string{`{"product_id": 1, "count": 3}`, `null`, `[1, 2]`, `{"product_id": 1,`,
		`{"product_id": 1, "count": 2} x`, `{"product_id": 1, "count": 2.5}`, `{"product_id":1,"count":1e2}`, "{\"product_id\":1,\"count\":1,\"\\u0063ount\":2}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := api.ParseOrder(body)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", body, err)
		}
		if len(m) != 2 || m["product_id"] == nil || m["count"] == nil {
			t.Fatalf("accepted %q, whose keys are %v", body, m)
		}
		var want struct{ ProductID, Count int64 }
		if err := json.Unmarshal(body, &struct {
			ProductID *int64 `json:"product_id"`
			Count     *int64 `json:"count"`
		}{&want.ProductID, &want.Count}); err != nil {
			t.Fatalf("accepted %q, which encoding/json cannot read as integers: %v", body, err)
		}
		if o.ProductID != want.ProductID || o.Count != want.Count {
			t.Fatalf("%q gave %+v, encoding/json %+v", body, o, want)
		}
		if strings.Count(string(body), ":") < 2 {
			t.Fatalf("accepted %q with fewer than two members", body)
		}
	})
}
