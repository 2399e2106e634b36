//go:build duckdb_arrow

package httpsrv_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/httpsrv"
)

// upstreamRefreshRequest is gospice's DatasetRefreshRequest (spiceai/gospice,
// datasets.go): what RefreshDataset sends as the body.
type upstreamRefreshRequest struct {
	RefreshSQL *string `json:"refresh_sql,omitempty"`
	Mode       *string `json:"refresh_mode,omitempty"`
	MaxJitter  *string `json:"refresh_jitter_max,omitempty"`
}

func body(t *testing.T, r *upstreamRefreshRequest) string {
	t.Helper()
	b, err := json.Marshal(r) // nil marshals as null, as gospice sends without options
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ptr(s string) *string { return &s }

// TestRefreshOverrides sends upstream's refresh bodies: valid overrides reach
// that one refresh's scan; bad ones answer 400 saying what is allowed.
func TestRefreshOverrides(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	products, orders := runtimetest.RecipeSources(t, mem, 100)
	e := runtimetest.NewEngine(t, runtimetest.RecipePod, map[string]engine.Source{"products": products, "orders": orders}, nil)
	runtimetest.WaitReady(t, e)
	h := httpsrv.New("127.0.0.1:0", e).Handler()
	const path = "/v1/datasets/products/acceleration/refresh"

	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"malformed JSON", `{"refresh_sql": `, []string{"malformed", "refresh_mode"}},
		{"unknown mode", body(t, &upstreamRefreshRequest{Mode: ptr("sometimes")}), []string{`"sometimes"`, "full or append"}},
		{"unknown field", `{"refresh_sqll": "SELECT * FROM products"}`, []string{"refresh_sqll", "refresh_sql"}},
		{"refresh_sql of another table", body(t, &upstreamRefreshRequest{RefreshSQL: ptr("SELECT * FROM orders")}), []string{"refresh_sql", "FROM products"}},
		{"bad jitter", body(t, &upstreamRefreshRequest{MaxJitter: ptr("soon")}), []string{"refresh_jitter_max", "10s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(h, "POST", path, tc.body, map[string]string{"Content-Type": "application/json"})
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("POST %s = %d %q, want 400", tc.body, rec.Code, rec.Body.String())
			}
			var msg struct{ Message string }
			if err := json.Unmarshal(rec.Body.Bytes(), &msg); err != nil {
				t.Fatalf("decode %q: %v", rec.Body.String(), err)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg.Message, w) {
					t.Errorf("message %q does not say %q", msg.Message, w)
				}
			}
		})
	}

	refresh := func(b string) engine.ScanRequest {
		t.Helper()
		n := len(products.Requests())
		if rec := do(h, "POST", path, b, nil); rec.Code != http.StatusCreated {
			t.Fatalf("POST %s = %d %q, want 201", b, rec.Code, rec.Body.String())
		}
		runtimetest.WaitFor(t, e, fmt.Sprintf("the refresh after %s", b), func() bool { return len(products.Requests()) > n })
		return products.Requests()[n]
	}
	override := body(t, &upstreamRefreshRequest{RefreshSQL: ptr("SELECT id, name FROM products WHERE id <= 2 LIMIT 5"), Mode: ptr("full")})
	if req := refresh(override); req.Where != "id <= 2" || strings.Join(req.Columns, ",") != "id,name" || req.Limit != 5 {
		t.Fatalf("override refresh scanned %+v, want refresh_sql's columns, WHERE id <= 2 and LIMIT 5", req)
	}
	for _, b := range []string{"", body(t, nil)} {
		if req := refresh(b); req.Where != "" || req.Columns != nil || req.Limit != 0 {
			t.Fatalf("refresh with body %q scanned %+v, want the spicepod's (whole table)", b, req)
		}
	}
}
