//go:build duckdb_arrow

package duckdb_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
)

// A transaction keeps its first INSERT back until it knows whether another
// statement follows (txconn.go). Whatever follows, the transaction must
// commit or roll back as a whole, and see its own insert.
func TestKeptInsert(t *testing.T) {
	many := func() string { // more rows than a prepared INSERT takes
		var b strings.Builder
		b.WriteString("[")
		for i := 10; i < 110; i++ {
			if i > 10 {
				b.WriteString(",")
			}
			b.WriteString(`{"id": ` + strconv.Itoa(i) + `, "body": "m", "n": 1}`)
		}
		return b.String() + "]"
	}()
	tests := []struct {
		name     string
		run      func(tb testing.TB, mem memory.Allocator, tx *duckdb.Tx) error
		rollback bool
		want     string // docs rows after
		wantErr  string // from Commit
		wantWM   position.LSN
	}{
		{
			name: "alone, committed",
			run: func(tb testing.TB, mem memory.Allocator, tx *duckdb.Tx) error {
				_, err := tx.Insert("docs", rowsOf(tb, mem, docs, `[{"id": 3, "body": "c", "n": 3}]`))
				return err
			},
			want: "1:a:1 2:b:2 3:c:3",
		},
		{
			name: "alone, through the appender, with a watermark kept in memory",
			run: func(tb testing.TB, mem memory.Allocator, tx *duckdb.Tx) error {
				if _, err := tx.Insert("docs", rowsOf(tb, mem, docs, many)); err != nil {
					return err
				}
				return tx.SetWatermark(7, "docs")
			},
			want:   "100 rows",
			wantWM: 7,
		},
		{
			name: "alone, rolled back",
			run: func(tb testing.TB, mem memory.Allocator, tx *duckdb.Tx) error {
				_, err := tx.Insert("docs", rowsOf(tb, mem, docs, `[{"id": 3, "body": "c", "n": 3}]`))
				return err
			},
			rollback: true,
			want:     "1:a:1 2:b:2",
		},
		{
			name: "two inserts",
			run: func(tb testing.TB, mem memory.Allocator, tx *duckdb.Tx) error {
				if _, err := tx.Insert("docs", rowsOf(tb, mem, docs, `[{"id": 3, "body": "c", "n": 3}]`)); err != nil {
					return err
				}
				_, err := tx.Insert("docs", rowsOf(tb, mem, docs, `[{"id": 4, "body": "d", "n": 4}]`))
				return err
			},
			want: "1:a:1 2:b:2 3:c:3 4:d:4",
		},
		{
			name: "two inserts, rolled back",
			run: func(tb testing.TB, mem memory.Allocator, tx *duckdb.Tx) error {
				if _, err := tx.Insert("docs", rowsOf(tb, mem, docs, `[{"id": 3, "body": "c", "n": 3}]`)); err != nil {
					return err
				}
				_, err := tx.Insert("docs", rowsOf(tb, mem, docs, `[{"id": 4, "body": "d", "n": 4}]`))
				return err
			},
			rollback: true,
			want:     "1:a:1 2:b:2",
		},
		{
			name: "a delete after the insert sees it",
			run: func(tb testing.TB, mem memory.Allocator, tx *duckdb.Tx) error {
				if _, err := tx.Insert("docs", rowsOf(tb, mem, docs, `[{"id": 3, "body": "c", "n": 3}]`)); err != nil {
					return err
				}
				n, err := tx.Delete("docs", rowsOf(tb, mem, keys, `[{"id": 3}, {"id": 1}]`))
				if err == nil && n != 2 {
					tb.Errorf("deleted %d rows, want 2", n)
				}
				return err
			},
			want: "2:b:2",
		},
		{
			name: "a read after the insert sees it",
			run: func(tb testing.TB, mem memory.Allocator, tx *duckdb.Tx) error {
				if _, err := tx.Insert("docs", rowsOf(tb, mem, docs, `[{"id": 3, "body": "c", "n": 3}]`)); err != nil {
					return err
				}
				recs, err := tx.Scan("SELECT count(*) FROM docs")
				if err != nil {
					return err
				}
				defer releaseRecs(recs)
				if got := recs[0].Column(0).ValueStr(0); got != "3" {
					tb.Errorf("read %s rows, want 3", got)
				}
				return nil
			},
			want: "1:a:1 2:b:2 3:c:3",
		},
		{
			name: "a failing insert fails the commit and moves no watermark",
			run: func(tb testing.TB, mem memory.Allocator, tx *duckdb.Tx) error {
				if _, err := tx.Insert("missing", rowsOf(tb, mem, docs, `[{"id": 3, "body": "c", "n": 3}]`)); err != nil {
					return err
				}
				return tx.SetWatermark(9, "docs")
			},
			want:    "1:a:1 2:b:2",
			wantErr: "missing",
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
			tx, err := db.Begin(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.run(t, mem, tx); err != nil {
				tx.Rollback()
				t.Fatal(err)
			}
			if tc.rollback {
				tx.Rollback()
			} else {
				err := tx.Commit()
				switch {
				case tc.wantErr == "" && err != nil:
					t.Fatal(err)
				case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
					t.Fatalf("commit err=%v, want one containing %q", err, tc.wantErr)
				}
			}
			got := docsTable(t, db)
			if strings.HasSuffix(tc.want, " rows") {
				got = scalar(t, db, "SELECT count(*) FROM docs WHERE body = 'm'") + " rows"
			}
			if got != tc.want {
				t.Fatalf("rows=%q, want %q", got, tc.want)
			}
			wm, err := db.Watermarks(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := wm["docs"]; got != tc.wantWM {
				t.Fatalf("watermark=%s, want %s", got, tc.wantWM)
			}
			// The connection is usable afterwards: nothing left half begun.
			write(t, db, func(tx *duckdb.Tx) error {
				_, err := tx.Delete("docs", rowsOf(t, mem, keys, `[{"id": 2}]`))
				return err
			})
			if got := scalar(t, db, "SELECT count(*) FROM docs WHERE id = 2"); got != "0" {
				t.Fatalf("rows of id 2 after a later delete=%s, want 0", got)
			}
		})
	}
}

func releaseRecs(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}
