//go:build duckdb_arrow

package duckdb_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// rowsOf returns a reader over rows given as JSON objects, released at cleanup.
func rowsOf(tb testing.TB, mem memory.Allocator, schema *arrow.Schema, json string) array.RecordReader {
	tb.Helper()
	rec, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(json))
	if err != nil {
		tb.Fatal(err)
	}
	defer rec.Release()
	rd, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(rd.Release)
	return rd
}

func fields(fs ...arrow.Field) *arrow.Schema { return arrow.NewSchema(fs, nil) }

// writeOrFail runs fn in a transaction and commits it when it succeeds. With
// wantErr set, fn must fail with an error containing it, and the transaction
// is rolled back.
func writeOrFail(t *testing.T, db *duckdb.DB, wantErr string, fn func(tx *duckdb.Tx) error) {
	t.Helper()
	tx, err := db.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	err = fn(tx)
	switch {
	case wantErr == "" && err != nil:
		tx.Rollback()
		t.Fatal(err)
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		tx.Rollback()
		t.Fatalf("err=%v, want one containing %q", err, wantErr)
	case err != nil:
		tx.Rollback()
	default:
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
}

// noTempTables fails when a temporary table outlived its transaction.
func noTempTables(t *testing.T, db *duckdb.DB) {
	t.Helper()
	if got, want := scalar(t, db, `SELECT count(*) FROM duckdb_tables() WHERE temporary`), "0"; got != want {
		t.Fatalf("temporary tables left=%s, want %s", got, want)
	}
}

var (
	idField   = arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	bodyField = arrow.Field{Name: "body", Type: arrow.BinaryTypes.String, Nullable: true}
	nField    = arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true}
	fromField = arrow.Field{Name: "_from_0", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	docs      = fields(idField, bodyField, nField)
	keys      = fields(idField)
	// sentIDN lacks body: rows that must take it from the local row.
	sentIDN = fields(idField, nField, fromField)
)

// docsTable returns the docs table as "id:body:n" rows, ordered by id.
func docsTable(tb testing.TB, db *duckdb.DB) string {
	tb.Helper()
	return scalar(tb, db, `SELECT coalesce(string_agg(id || ':' || coalesce(body, 'NULL') || ':' || n, ' ' ORDER BY id), '') FROM docs`)
}

func TestApplyChanges(t *testing.T) {
	tests := []struct {
		name    string
		changes func(tb testing.TB, mem memory.Allocator) engine.Changes
		want    string // rows after, or the old rows when wantErr
		wantErr string
	}{
		{
			name: "nothing",
			changes: func(testing.TB, memory.Allocator) engine.Changes {
				return engine.Changes{}
			},
			want: "1:a:1 2:b:2",
		},
		{
			name: "insert",
			changes: func(tb testing.TB, mem memory.Allocator) engine.Changes {
				return engine.Changes{Insert: rowsOf(tb, mem, docs, `[{"id": 3, "body": "c", "n": 3}]`)}
			},
			want: "1:a:1 2:b:2 3:c:3",
		},
		{
			name: "delete then insert replaces a row",
			changes: func(tb testing.TB, mem memory.Allocator) engine.Changes {
				return engine.Changes{
					Delete: rowsOf(tb, mem, keys, `[{"id": 1}, {"id": 2}]`),
					Insert: rowsOf(tb, mem, docs, `[{"id": 2, "body": "B", "n": 20}]`),
				}
			},
			want: "2:B:20",
		},
		{
			name: "truncate runs before insert",
			changes: func(tb testing.TB, mem memory.Allocator) engine.Changes {
				return engine.Changes{Truncate: true, Insert: rowsOf(tb, mem, docs, `[{"id": 7, "body": "g", "n": 7}]`)}
			},
			want: "7:g:7",
		},
		{
			name: "complete takes missing columns from the row deleted in the same batch",
			changes: func(tb testing.TB, mem memory.Allocator) engine.Changes {
				return engine.Changes{
					Key:      []string{"id"},
					Delete:   rowsOf(tb, mem, keys, `[{"id": 1}]`),
					Complete: []array.RecordReader{rowsOf(tb, mem, sentIDN, `[{"id": 1, "n": 10, "_from_0": 1}]`)},
				}
			},
			want: "1:a:10 2:b:2",
		},
		{
			name: "complete follows a key change",
			changes: func(tb testing.TB, mem memory.Allocator) engine.Changes {
				return engine.Changes{
					Key:      []string{"id"},
					Delete:   rowsOf(tb, mem, keys, `[{"id": 2}]`),
					Complete: []array.RecordReader{rowsOf(tb, mem, sentIDN, `[{"id": 5, "n": 50, "_from_0": 2}]`)},
				}
			},
			want: "1:a:1 5:b:50",
		},
		{
			name: "complete reads the table before truncate",
			changes: func(tb testing.TB, mem memory.Allocator) engine.Changes {
				return engine.Changes{
					Truncate: true,
					Key:      []string{"id"},
					Complete: []array.RecordReader{
						rowsOf(tb, mem, sentIDN, `[{"id": 1, "n": 11, "_from_0": 1}]`),
						rowsOf(tb, mem, fields(idField, fromField), `[{"id": 2, "_from_0": 2}]`),
					},
				}
			},
			want: "1:a:11 2:b:2",
		},
		{
			name: "complete fails when the local row is missing",
			changes: func(tb testing.TB, mem memory.Allocator) engine.Changes {
				return engine.Changes{
					Key:      []string{"id"},
					Complete: []array.RecordReader{rowsOf(tb, mem, sentIDN, `[{"id": 9, "n": 9, "_from_0": 9}]`)},
				}
			},
			want:    "1:a:1 2:b:2",
			wantErr: "is missing (key 9)",
		},
		{
			name: "complete without key columns is refused",
			changes: func(tb testing.TB, mem memory.Allocator) engine.Changes {
				return engine.Changes{Complete: []array.RecordReader{rowsOf(tb, mem, sentIDN, `[]`)}}
			},
			want:    "1:a:1 2:b:2",
			wantErr: "need the 0 key columns",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			t.Cleanup(func() { mem.AssertSize(t, 0) })
			db := MustOpen(t, "")
			write(t, db, func(tx *duckdb.Tx) error {
				_, err := tx.Replace("docs", rowsOf(t, mem, docs, `[{"id": 1, "body": "a", "n": 1}, {"id": 2, "body": "b", "n": 2}]`))
				return err
			})
			writeOrFail(t, db, tc.wantErr, func(tx *duckdb.Tx) error { return tx.ApplyChanges("docs", tc.changes(t, mem)) })
			if got := docsTable(t, db); got != tc.want {
				t.Fatalf("rows=%q, want %q", got, tc.want)
			}
			noTempTables(t, db)
		})
	}
}

func TestCreateIndex(t *testing.T) {
	tests := []struct {
		name    string
		columns []string
		unique  bool
		want    string // name:unique of the index
		dupErr  bool   // inserting a duplicate (id, body) fails
	}{
		{name: "one column", columns: []string{"n"}, want: "docs_n_idx:false"},
		{name: "several columns", columns: []string{"id", "body"}, want: "docs_id_body_idx:false"},
		{name: "unique", columns: []string{"id", "body"}, unique: true, want: "docs_id_body_idx:true", dupErr: true},
		{name: "quoted name", columns: []string{`we"ird`}, want: `docs_we"ird_idx:false`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := MustOpen(t, "")
			write(t, db, func(tx *duckdb.Tx) error {
				return tx.Exec(`CREATE TABLE docs (id BIGINT, body VARCHAR, n INTEGER, "we""ird" INTEGER)`)
			})
			for range 2 { // a second CreateIndex finds it and does nothing
				write(t, db, func(tx *duckdb.Tx) error { return tx.CreateIndex("docs", tc.columns, tc.unique) })
			}
			got := scalar(t, db, `SELECT string_agg(index_name || ':' || is_unique, ' ') FROM duckdb_indexes() WHERE table_name = 'docs'`)
			if got != tc.want {
				t.Fatalf("indexes=%q, want %q", got, tc.want)
			}
			tx, err := db.Begin(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			err = tx.Exec(`INSERT INTO docs VALUES (1, 'a', 1, 1), (1, 'a', 2, 2)`)
			if got := err != nil; got != tc.dupErr {
				t.Fatalf("duplicate insert err=%v, want an error: %t", err, tc.dupErr)
			}
		})
	}
	t.Run("no columns", func(t *testing.T) {
		db := MustOpen(t, "")
		tx, err := db.Begin(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if err := tx.CreateIndex("docs", nil, false); err == nil {
			t.Fatal("CreateIndex without columns succeeded, want an error")
		}
	})
}

func TestDeleteOlderThan(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		column  string
		bound   any
		want    string // ids left
		deleted int64
		wantErr bool
	}{
		{name: "time", column: "created_at", bound: t0.Add(90 * time.Minute), want: "3,4", deleted: 2},
		{name: "time before every row", column: "created_at", bound: t0, want: "1,2,3,4"},
		{name: "number", column: "count", bound: 30, want: "3,4", deleted: 2},
		{name: "string", column: "created_at", bound: "2026-01-01 02:30:00+00", want: "4", deleted: 3},
		{name: "unsupported bound", column: "count", bound: struct{}{}, want: "1,2,3,4", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			t.Cleanup(func() { mem.AssertSize(t, 0) })
			db := MustOpen(t, "")
			var rows []order
			for i := range 4 {
				rows = append(rows, order{int64(i + 1), 1, int32(10 * (i + 1)), t0.Add(time.Duration(i) * time.Hour)})
			}
			write(t, db, func(tx *duckdb.Tx) error {
				_, err := tx.Replace("orders", orders(t, mem, rows...))
				return err
			})
			tx, err := db.Begin(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			n, err := tx.DeleteOlderThan("orders", tc.column, tc.bound)
			if got := err != nil; got != tc.wantErr {
				tx.Rollback()
				t.Fatalf("err=%v, want an error: %t", err, tc.wantErr)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if got, want := n, tc.deleted; got != want {
				t.Errorf("deleted=%d, want %d", got, want)
			}
			if got := scalar(t, db, `SELECT string_agg(id::VARCHAR, ',' ORDER BY id) FROM orders`); got != tc.want {
				t.Fatalf("ids=%s, want %s", got, tc.want)
			}
		})
	}
}

func TestFingerprintsCommitWithTheTransaction(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t, "")
	fps, err := db.Fingerprints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(fps) != 0 {
		t.Fatalf("fingerprints of a new database=%v, want none", fps)
	}
	write(t, db, func(tx *duckdb.Tx) error {
		if err := tx.SetFingerprint("orders", "v1"); err != nil {
			return err
		}
		if err := tx.SetFingerprint("products", "it's"); err != nil {
			return err
		}
		return tx.SetFingerprint("orders", "v2")
	})
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.SetFingerprint("orders", "rolled back"); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	fps, err = db.Fingerprints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(fps), 2; got != want {
		t.Fatalf("fingerprints=%v, want %d", fps, want)
	}
	for ds, want := range map[string]string{"orders": "v2", "products": "it's"} {
		if got := fps[ds]; got != want {
			t.Errorf("fingerprint of %s=%q, want %q", ds, got, want)
		}
	}
}
