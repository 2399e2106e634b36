//go:build duckdb_arrow

package duckdb_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
)

// multiset returns the docs table as sorted "id:body:n" rows, duplicates
// kept, leaving out the row of id 1000 (see TestApplyDiffIsAMultisetChange).
func multiset(tb testing.TB, db *duckdb.DB) string {
	tb.Helper()
	return scalar(tb, db, `SELECT coalesce(string_agg(coalesce(id::VARCHAR, 'NULL') || ':' || coalesce(body, 'NULL') || ':' || coalesce(n::VARCHAR, 'NULL'), ' '
		ORDER BY id NULLS FIRST, body NULLS FIRST, n NULLS FIRST), '') FROM docs WHERE id IS DISTINCT FROM 1000`)
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
	// A small table subscribed to is held whole in memory and written again
	// from there; a row inserted by another path drops that copy, and the
	// retractions run in SQL. Both paths must give the same multisets.
	for _, path := range []string{"in memory", "in SQL"} {
		for _, tc := range tests {
			t.Run(path+"/"+tc.name, func(t *testing.T) {
				applyDiffCase(t, start, path == "in SQL", tc.del, tc.ins, tc.want, tc.wantErr)
			})
		}
	}
}

func applyDiffCase(t *testing.T, start string, sql bool, delRows, insRows, want, wantErr string) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	db := MustOpen(t, "")
	write(t, db, func(tx *duckdb.Tx) error {
		_, err := tx.Replace("docs", rowsOf(t, mem, docs, start))
		return err
	})
	if sql {
		write(t, db, func(tx *duckdb.Tx) error {
			_, err := tx.Insert("docs", rowsOf(t, mem, docs, `[{"id": 1000, "body": "other path", "n": 0}]`))
			return err
		})
	}
	var del, ins array.RecordReader
	if delRows != "" {
		del = rowsOf(t, mem, docs, delRows)
	}
	if insRows != "" {
		ins = rowsOf(t, mem, docs, insRows)
	}
	writeOrFail(t, db, wantErr, func(tx *duckdb.Tx) error { return tx.ApplyDiff("docs", del, ins) })
	if got := multiset(t, db); got != want {
		t.Fatalf("rows=%q, want %q", got, want)
	}
	noTempTables(t, db)
}

// TestApplyDiffPastTheMirror: a small table that a diff makes larger than
// is held in memory takes the SQL path from then on, with the same rows.
func TestApplyDiffPastTheMirror(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	db := MustOpen(t, "")
	write(t, db, func(tx *duckdb.Tx) error {
		_, err := tx.Replace("docs", rowsOf(t, mem, docs, `[{"id": 1, "body": "a", "n": 1}]`))
		return err
	})
	many := "["
	for i := range 1500 {
		if i > 0 {
			many += ","
		}
		many += fmt.Sprintf(`{"id": %d, "body": "b", "n": 2}`, i+2)
	}
	write(t, db, func(tx *duckdb.Tx) error {
		return tx.ApplyDiff("docs", rowsOf(t, mem, docs, `[{"id": 1, "body": "a", "n": 1}]`), rowsOf(t, mem, docs, many+"]"))
	})
	write(t, db, func(tx *duckdb.Tx) error {
		return tx.ApplyDiff("docs", rowsOf(t, mem, docs, `[{"id": 2, "body": "b", "n": 2}]`), rowsOf(t, mem, docs, `[{"id": 2, "body": "c", "n": 3}]`))
	})
	if got, want := scalar(t, db, `SELECT count(*) || ' ' || count(*) FILTER (WHERE body = 'c') || ' ' || count(*) FILTER (WHERE id = 1) FROM docs`), "1500 1 0"; got != want {
		t.Fatalf("rows, rows changed by the last diff, rows retracted by the first: %s, want %s", got, want)
	}
}

// TestApplyDiffRollsBackWithItsTransaction: the appenders write inside the
// store transaction, so a rolled back diff leaves nothing behind.
func TestApplyDiffRollsBackWithItsTransaction(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	db := MustOpen(t, "")
	write(t, db, func(tx *duckdb.Tx) error {
		_, err := tx.Replace("docs", rowsOf(t, mem, docs, `[{"id": 1, "body": "a", "n": 1}, {"id": 2, "body": "b", "n": 2}]`))
		return err
	})
	tx, err := db.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	err = tx.ApplyDiff("docs", rowsOf(t, mem, docs, `[{"id": 1, "body": "a", "n": 1}]`), rowsOf(t, mem, docs, `[{"id": 3, "body": "c", "n": 3}]`))
	tx.Rollback()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := multiset(t, db), "1:a:1 2:b:2"; got != want {
		t.Fatalf("rows after the rollback=%q, want %q", got, want)
	}
}

// TestApplyDiffKeepsEveryType: rows of each type the appenders take (NULLs
// too) are retracted by equality and inserted with their values.
func TestApplyDiffKeepsEveryType(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	schema := fields(
		arrow.Field{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		arrow.Field{Name: "u", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
		arrow.Field{Name: "f", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		arrow.Field{Name: "d", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}, Nullable: true},
		arrow.Field{Name: "h", Type: &arrow.Decimal128Type{Precision: 38, Scale: 0}, Nullable: true},
		arrow.Field{Name: "day", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		arrow.Field{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		arrow.Field{Name: "ns", Type: &arrow.TimestampType{Unit: arrow.Nanosecond}, Nullable: true},
		arrow.Field{Name: "s", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		arrow.Field{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
	)
	const start = `[
		{"b": true, "u": 7, "f": 1.5, "d": "12345678901234.56", "h": "99999999999999999999999999999999999999", "day": "2024-02-29", "ts": "2024-01-02T03:04:05.123456Z", "ns": "2024-01-02T03:04:05.123456789", "s": "x", "bin": "AQI="},
		{"b": null, "u": null, "f": null, "d": null, "h": null, "day": null, "ts": null, "ns": null, "s": null, "bin": null}
	]`
	const row = `[{"b": true, "u": 7, "f": 1.5, "d": "12345678901234.56", "h": "99999999999999999999999999999999999999", "day": "2024-02-29", "ts": "2024-01-02T03:04:05.123456Z", "ns": "2024-01-02T03:04:05.123456789", "s": "x", "bin": "AQI="}]`
	const newRow = `[{"b": false, "u": 8, "f": -2.25, "d": "-0.01", "h": "-5", "day": "1970-01-01", "ts": "1999-12-31T23:59:59.999999Z", "ns": "2000-01-01T00:00:00.000000001", "s": "y", "bin": "Aw=="}]`
	contents := `SELECT string_agg(concat_ws('|', b, u, f, d, h, day, ts AT TIME ZONE 'UTC', ns, s, hex(bin)), ' ' ORDER BY u NULLS FIRST) FROM docs`
	for _, nulls := range []bool{false, true} {
		db := MustOpen(t, "")
		write(t, db, func(tx *duckdb.Tx) error {
			_, err := tx.Replace("docs", rowsOf(t, mem, schema, start))
			return err
		})
		del := row
		if nulls {
			del = `[{}]`
		}
		write(t, db, func(tx *duckdb.Tx) error {
			return tx.ApplyDiff("docs", rowsOf(t, mem, schema, del), rowsOf(t, mem, schema, newRow))
		})
		want := "false|8|-2.25|-0.01|-5|1970-01-01|1999-12-31 23:59:59.999999|2000-01-01 00:00:00.000000001|y|03"
		if nulls {
			want = "true|7|1.5|12345678901234.56|99999999999999999999999999999999999999|2024-02-29|2024-01-02 03:04:05.123456|2024-01-02 03:04:05.123456789|x|0102 " + want
		} else {
			want = " " + want // the row of NULLs renders empty
		}
		if got := scalar(t, db, contents); got != want {
			t.Errorf("retracting %s: rows=%q, want %q", del, got, want)
		}
	}
}
