//go:build duckdb_arrow

package duckdb_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// Keys of two columns, NULLs included: a NULL key column matches NULL (as IS NOT
// DISTINCT FROM), whichever way Delete and the upsert find the rows.
var (
	aField   = arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	pairs    = fields(aField, bodyField, nField)
	pairKeys = fields(aField, bodyField)
)

const pairRows = `[{"a": 1, "body": "x", "n": 1}, {"a": 1, "body": null, "n": 2}, {"a": null, "body": "y", "n": 3},
	{"a": null, "body": null, "n": 4}, {"a": 2, "body": "z", "n": 5}]`

func pairsTable(tb testing.TB, db *duckdb.DB) string {
	tb.Helper()
	return scalar(tb, db, `SELECT string_agg(coalesce(a::VARCHAR, 'NULL') || ':' || coalesce(body, 'NULL') || ':' || n, ' ' ORDER BY n) FROM pairs`)
}

func TestKeyMatchTreatsNULLAsAValue(t *testing.T) {
	tests := []struct {
		name  string
		apply func(tb testing.TB, mem memory.Allocator, tx *duckdb.Tx) (int64, error)
		n     int64
		want  string
	}{
		{
			name: "delete",
			apply: func(tb testing.TB, mem memory.Allocator, tx *duckdb.Tx) (int64, error) {
				return tx.Delete("pairs", rowsOf(tb, mem, pairKeys,
					`[{"a": 1, "body": null}, {"a": null, "body": null}, {"a": 2, "body": "z"}, {"a": 3, "body": "q"}]`))
			},
			n:    3,
			want: "1:x:1 NULL:y:3",
		},
		{
			name: "delete by a key given twice",
			apply: func(tb testing.TB, mem memory.Allocator, tx *duckdb.Tx) (int64, error) {
				return tx.Delete("pairs", rowsOf(tb, mem, pairKeys, `[{"a": null, "body": "y"}, {"a": null, "body": "y"}]`))
			},
			n:    1,
			want: "1:x:1 1:NULL:2 NULL:NULL:4 2:z:5",
		},
		{
			name: "upsert",
			apply: func(tb testing.TB, mem memory.Allocator, tx *duckdb.Tx) (int64, error) {
				return tx.Append("pairs", rowsOf(tb, mem, pairs,
					`[{"a": 1, "body": "x", "n": 10}, {"a": null, "body": null, "n": 40}, {"a": 4, "body": "w", "n": 60}]`),
					engine.AppendOptions{Key: []string{"a", "body"}, Upsert: true})
			},
			n:    3,
			want: "1:NULL:2 NULL:y:3 2:z:5 1:x:10 NULL:NULL:40 4:w:60",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			t.Cleanup(func() { mem.AssertSize(t, 0) })
			db := MustOpen(t, "")
			write(t, db, func(tx *duckdb.Tx) error {
				_, err := tx.Replace("pairs", rowsOf(t, mem, pairs, pairRows))
				return err
			})
			write(t, db, func(tx *duckdb.Tx) error {
				n, err := tc.apply(t, mem, tx)
				if err == nil && n != tc.n {
					t.Errorf("%d rows affected, want %d", n, tc.n)
				}
				return err
			})
			if got := pairsTable(t, db); got != tc.want {
				t.Fatalf("rows=%q, want %q", got, tc.want)
			}
		})
	}
}
