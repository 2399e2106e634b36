//go:build duckdb_arrow

package duckdbsrc_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/duckdbsrc"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// makeDB writes a DuckDB file with a table in main and one in schema shop.
func makeDB(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func rows(t *testing.T, src engine.Source, req engine.ScanRequest) ([]string, position.LSN) {
	t.Helper()
	var out []string
	var pos position.LSN
	err := src.Scan(context.Background(), req, func(s engine.Snapshot) error {
		pos = s.Position
		for s.Reader.Next() {
			rec := s.Reader.RecordBatch()
			for r := 0; r < int(rec.NumRows()); r++ {
				var cells []string
				for c := 0; c < int(rec.NumCols()); c++ {
					cells = append(cells, strings.Clone(rec.Column(c).ValueStr(r))) // the reader owns the bytes
				}
				out = append(out, strings.Join(cells, ","))
			}
		}
		return s.Reader.Err()
	})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return out, pos
}

func TestDuckDBSource(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "shop.db")
	makeDB(t, path,
		"CREATE TABLE orders (id INTEGER, product VARCHAR, count INTEGER)",
		"INSERT INTO orders VALUES (1, 'Laptop', 10), (2, 'Phone', 20)",
		"CREATE SCHEMA sales",
		`CREATE TABLE sales."Customer" (id INTEGER, name VARCHAR)`,
		`INSERT INTO sales."Customer" VALUES (7, 'Ada')`,
		`CREATE TABLE "group" (id INTEGER)`, `INSERT INTO "group" VALUES (3)`)
	cfg, err := duckdbsrc.ParseParams(map[string]string{"duckdb_open": "shop.db"}, spicepod.Paths{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		table string
		req   engine.ScanRequest
		want  []string
	}{
		{table: "orders", want: []string{"1,Laptop,10", "2,Phone,20"}},
		{table: "main.orders", req: engine.ScanRequest{Where: "count > 15", Columns: []string{"product"}}, want: []string{"Phone"}},
		{table: "shop.main.orders", req: engine.ScanRequest{Since: &engine.Bound{Column: "id", Value: int64(2)}}, want: []string{"2,Phone,20"}},
		{table: `sales."Customer"`, want: []string{"7,Ada"}},
		{table: "SALES.customer", want: []string{"7,Ada"}},
		{table: "group", want: []string{"3"}},
	} {
		t.Run(tc.table, func(t *testing.T) {
			src := duckdbsrc.NewSource(cfg, tc.table)
			if err := src.Open(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			got, pos := rows(t, src, tc.req)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("rows = %q, want %q", got, tc.want)
			}
			if pos.IsZero() {
				t.Error("zero position")
			}
		})
	}

	// The file is not held between scans: a writer can change it, and the next
	// scan sees the change at a later position.
	src := duckdbsrc.NewSource(cfg, "orders")
	if err := src.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, p1 := rows(t, src, engine.ScanRequest{})
	makeDB(t, path, "INSERT INTO orders VALUES (3, 'Tablet', 5)")
	got, p2 := rows(t, src, engine.ScanRequest{})
	if len(got) != 3 || p2 <= p1 {
		t.Fatalf("after a write: rows %q at %s (was %s)", got, p2, p1)
	}
}

func TestDuckDBErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "shop.db")
	makeDB(t, path, "CREATE TABLE orders (id INTEGER)", "CREATE VIEW big AS SELECT * FROM orders WHERE id > 1")
	for _, tc := range []struct {
		name   string
		params map[string]string
		table  string
		want   []string
	}{
		{name: "no duckdb_open", params: nil, table: "orders", want: []string{"duckdb_open is required"}},
		{name: "unknown param", params: map[string]string{"duckdb_open": "shop.db", "open": "x"}, table: "orders", want: []string{"open", "unknown to the duckdb connector", "duckdb_open"}},
		{name: "missing file", params: map[string]string{"duckdb_open": "nope.db"}, table: "orders", want: []string{filepath.Join(dir, "nope.db"), "does not exist", dir}},
		{name: "missing table", params: map[string]string{"duckdb_open": "shop.db"}, table: "order", want: []string{"no such table", "main.big, main.orders"}},
		{name: "function form", params: map[string]string{"duckdb_open": "shop.db"}, table: "read_csv('x.csv')", want: []string{"table functions", "file:"}},
		{name: "not a name", params: map[string]string{"duckdb_open": "shop.db"}, table: "orders; DROP TABLE x", want: []string{"not a table name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := duckdbsrc.ParseParams(tc.params, spicepod.Paths{Dir: dir})
			if err == nil {
				err = duckdbsrc.NewSource(cfg, tc.table).Open(context.Background())
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// The instance for a file reads nothing else.
func TestDBReadsOnlyAllowedFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "shop.db")
	makeDB(t, path, "CREATE TABLE t (id INTEGER)", "COPY (SELECT 1 AS x) TO '"+filepath.Join(dir, "other.csv")+"'")
	db, err := duckdbsrc.Open(context.Background(), duckdbsrc.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	err = db.QueryRow(context.Background(), "SELECT count(*) FROM read_csv('"+filepath.Join(dir, "other.csv")+"')").Scan(&n)
	if err == nil || !strings.Contains(err.Error(), "disabled by configuration") {
		t.Fatalf("read another file: %v, want a permission error", err)
	}
	if _, err := db.Query(context.Background(), "SET enable_external_access = true"); err == nil {
		t.Fatal("the configuration can be changed back")
	}
}
