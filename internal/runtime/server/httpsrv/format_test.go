//go:build duckdb_arrow

package httpsrv_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// TestSQLArrowStream reads /v1/sql as an Arrow IPC stream, as upstream clients
// (spice-py, spice-rs over HTTP) ask for it: the schema, then the rows.
func TestSQLArrowStream(t *testing.T) {
	h := newHandler(t)
	for _, tc := range []struct {
		name  string
		sql   string
		names []string
		rows  int
	}{
		{name: "rows", sql: "SELECT name, count FROM rankings", names: []string{"nintendo", "the most delicious chocalate", "the most beautiful flower"}, rows: 3},
		{name: "no rows still has the schema", sql: "SELECT name, count FROM rankings WHERE count < 0", rows: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(h, "POST", "/v1/sql", tc.sql, map[string]string{"Accept": "application/vnd.apache.arrow.stream"})
			if rec.Code != 200 {
				t.Fatalf("POST /v1/sql = %d %q", rec.Code, rec.Body.String())
			}
			if got, want := rec.Header().Get("Content-Type"), "application/vnd.apache.arrow.stream"; got != want {
				t.Errorf("Content-Type = %q, want %q", got, want)
			}
			r, err := ipc.NewReader(rec.Body)
			if err != nil {
				t.Fatalf("read arrow stream: %v", err)
			}
			defer r.Release()
			if got := r.Schema().NumFields(); got != 2 || r.Schema().Field(0).Name != "name" || r.Schema().Field(1).Name != "count" {
				t.Fatalf("schema = %s, want name, count", r.Schema())
			}
			var names []string
			rows := 0
			for r.Next() {
				b := r.RecordBatch()
				rows += int(b.NumRows())
				col := b.Column(0).(*array.String)
				for i := 0; i < col.Len(); i++ {
					names = append(names, col.Value(i))
				}
			}
			if err := r.Err(); err != nil {
				t.Fatalf("read arrow stream: %v", err)
			}
			if rows != tc.rows {
				t.Errorf("rows = %d, want %d", rows, tc.rows)
			}
			for i, want := range tc.names {
				if i >= len(names) || names[i] != want {
					t.Errorf("names = %q, want %q", names, tc.names)
					break
				}
			}
		})
	}
}
