//go:build duckdb_arrow

package duckdb_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
)

// multiset returns the docs table as sorted "id:body:n" rows, duplicates kept.
func multiset(tb testing.TB, db *duckdb.DB) string {
	tb.Helper()
	return scalar(tb, db, `SELECT coalesce(string_agg(coalesce(id::VARCHAR, 'NULL') || ':' || coalesce(body, 'NULL') || ':' || coalesce(n::VARCHAR, 'NULL'), ' '
		ORDER BY id NULLS FIRST, body NULLS FIRST, n NULLS FIRST), '') FROM docs`)
}

func TestApplyDiffIsAMultisetChange(t *testing.T) {
	const start = `[
		{"id": 1, "body": "a", "n": 1},
		{"id": 1, "body": "a", "n": 1},
		{"id": 1, "body": "a", "n": 1},
		{"id": 2, "body": null, "n": 2},
		{"id": 2, "body": null, "n": 2},
		{"id": null, "body": null, "n": null},
		{"id": 3, "body": "c", "n": 3}
	]`
	const all = "NULL:NULL:NULL 1:a:1 1:a:1 1:a:1 2:NULL:2 2:NULL:2 3:c:3"
	tests := []struct {
		name     string
		del, ins string // JSON rows; empty for none
		want     string // rows after, or all when wantErr
		wantErr  string
	}{
		{name: "nothing", want: all},
		{name: "empty readers", del: `[]`, ins: `[]`, want: all},
		{name: "one of three duplicates", del: `[{"id": 1, "body": "a", "n": 1}]`,
			want: "NULL:NULL:NULL 1:a:1 1:a:1 2:NULL:2 2:NULL:2 3:c:3"},
		{name: "two of three duplicates", del: `[{"id": 1, "body": "a", "n": 1}, {"id": 1, "body": "a", "n": 1}]`,
			want: "NULL:NULL:NULL 1:a:1 2:NULL:2 2:NULL:2 3:c:3"},
		{name: "a row with a NULL equals a row with a NULL", del: `[{"id": 2, "body": null, "n": 2}]`,
			want: "NULL:NULL:NULL 1:a:1 1:a:1 1:a:1 2:NULL:2 3:c:3"},
		{name: "a row of NULLs", del: `[{"id": null, "body": null, "n": null}]`,
			want: "1:a:1 1:a:1 1:a:1 2:NULL:2 2:NULL:2 3:c:3"},
		{name: "retract then insert the same row", del: `[{"id": 3, "body": "c", "n": 3}]`, ins: `[{"id": 3, "body": "c", "n": 3}]`,
			want: all},
		{name: "update as retract and insert", del: `[{"id": 3, "body": "c", "n": 3}, {"id": 1, "body": "a", "n": 1}]`,
			ins:  `[{"id": 3, "body": "c", "n": 30}, {"id": 4, "body": null, "n": 4}, {"id": 4, "body": null, "n": 4}]`,
			want: "NULL:NULL:NULL 1:a:1 1:a:1 2:NULL:2 2:NULL:2 3:c:30 4:NULL:4 4:NULL:4"},
		{name: "inserts only", ins: `[{"id": 1, "body": "a", "n": 1}]`,
			want: "NULL:NULL:NULL 1:a:1 1:a:1 1:a:1 1:a:1 2:NULL:2 2:NULL:2 3:c:3"},
		{name: "more retractions than equal rows fail", del: `[{"id": 2, "body": null, "n": 2}, {"id": 2, "body": null, "n": 2}, {"id": 2, "body": null, "n": 2}]`,
			want: all, wantErr: "3 rows were retracted but only 2 equal rows are held"},
		{name: "a NULL does not equal a value", del: `[{"id": 2, "body": "", "n": 2}]`,
			want: all, wantErr: "1 rows were retracted but only 0"},
		{name: "a failed retraction inserts nothing", del: `[{"id": 9, "body": "z", "n": 9}]`, ins: `[{"id": 5, "body": "e", "n": 5}]`,
			want: all, wantErr: "subscribe again"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			t.Cleanup(func() { mem.AssertSize(t, 0) })
			db := MustOpen(t, "")
			write(t, db, func(tx *duckdb.Tx) error {
				_, err := tx.Replace("docs", rowsOf(t, mem, docs, start))
				return err
			})
			var del, ins array.RecordReader
			if tc.del != "" {
				del = rowsOf(t, mem, docs, tc.del)
			}
			if tc.ins != "" {
				ins = rowsOf(t, mem, docs, tc.ins)
			}
			writeOrFail(t, db, tc.wantErr, func(tx *duckdb.Tx) error { return tx.ApplyDiff("docs", del, ins) })
			if got := multiset(t, db); got != tc.want {
				t.Fatalf("rows=%q, want %q", got, tc.want)
			}
			noTempTables(t, db)
		})
	}
}
