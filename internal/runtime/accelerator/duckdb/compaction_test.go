//go:build duckdb_arrow

package duckdb_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
)

// TestDeletedRowsAreCompacted: a table whose rows a subscription retracts and
// inserts again on every change holds its live rows and at most the deleted
// rows of one compaction period, not every row it ever held.
func TestDeletedRowsAreCompacted(t *testing.T) {
	for _, c := range []struct {
		name      string
		after     int64
		maxHeld   int64 // rows DuckDB holds for the table, live and deleted
		wantBound bool
	}{
		{"compacted", 200, 5 + 200 + 5, true},
		{"never compacted", 1 << 40, 5 + 200 + 5, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			db := duckdb.New("")
			db.CompactAfterRows = c.after
			if err := db.Open(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			rows := func(n int) string {
				s := "["
				for i := range 5 {
					if i > 0 {
						s += ","
					}
					s += fmt.Sprintf(`{"name": "p%d", "count": %d}`, i, n)
				}
				return s + "]"
			}
			write(t, db, func(tx *duckdb.Tx) error {
				_, err := tx.Replace("rankings", rowsOf(t, mem, rankingSchema, rows(0)))
				return err
			})
			for n := 1; n <= 1000; n++ {
				write(t, db, func(tx *duckdb.Tx) error {
					return tx.ApplyDiff("rankings", rowsOf(t, mem, rankingSchema, rows(n-1)), rowsOf(t, mem, rankingSchema, rows(n)))
				})
			}
			held, err := strconv.ParseInt(scalar(t, db, `SELECT estimated_size FROM duckdb_tables() WHERE table_name = 'rankings'`), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if got := held <= c.maxHeld; got != c.wantBound {
				t.Fatalf("DuckDB holds %d rows of the table (5 live); within %d: %v, want %v", held, c.maxHeld, got, c.wantBound)
			}
		})
	}
}
