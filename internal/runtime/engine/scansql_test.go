package engine_test

import (
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

func TestScanSQL(t *testing.T) {
	for _, tt := range []struct {
		name     string
		relation string
		columns  []string
		req      engine.ScanRequest
		want     string
	}{
		{"everything", "orders", nil, engine.ScanRequest{}, `SELECT * FROM orders`},
		{"columns quoted", `"Sales"."Customer"`, []string{"id", `we"ird`}, engine.ScanRequest{},
			`SELECT "id", "we""ird" FROM "Sales"."Customer"`},
		{"where, order by, limit", "rankings", []string{"name"}, engine.ScanRequest{Where: "count > 1", OrderBy: "count DESC", Limit: 3},
			`SELECT "name" FROM rankings WHERE (count > 1) ORDER BY count DESC LIMIT 3`},
		{"since and where", "orders", nil, engine.ScanRequest{Where: "id > 0", Since: &engine.Bound{Column: "at", Value: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}},
			`SELECT * FROM orders WHERE (id > 0) AND "at" >= '2026-01-02 03:04:05+00'`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := engine.ScanSQL(tt.relation, tt.columns, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ScanSQL = %q, want %q", got, tt.want)
			}
		})
	}
}
