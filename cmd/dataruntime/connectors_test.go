//go:build duckdb_arrow

package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
)

// runtimeIn writes pod as dir/spicepod.yaml and runs it in-process until cleanup.
func runtimeIn(tb testing.TB, dir, pod string) (*runtime, error) {
	tb.Helper()
	path := filepath.Join(dir, "spicepod.yaml")
	if err := os.WriteFile(path, []byte(pod), 0o644); err != nil {
		tb.Fatal(err)
	}
	cfg := Config{Spicepod: path, HTTPAddr: "127.0.0.1:0", FlightAddr: "127.0.0.1:0", DataDir: dir, MinPositionTimeout: 2 * time.Second}
	m := NewMain(cfg, slog.New(slog.NewTextHandler(testWriter{tb}, &slog.HandlerOptions{Level: slog.LevelInfo})))
	tb.Cleanup(func() { m.Close() })
	if err := m.Run(context.Background()); err != nil {
		return nil, err
	}
	return &runtime{Main: m, url: "http://" + m.HTTP.Addr()}, nil
}

func writeFile(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	// Write then rename, as an editor or an export job does: a reader never sees
	// half a file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
}

// duckdbExec runs statements in a scratch DuckDB (path "" for memory) to make
// test files: Parquet with COPY, DuckDB database files.
func duckdbExec(tb testing.TB, path string, stmts ...string) {
	tb.Helper()
	db, err := sql.Open("duckdb", path)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			tb.Fatalf("%s: %v", s, err)
		}
	}
}

// filesPod reads the recipe's tables from local files in four forms and serves
// the recipe's view over an in-memory localpod copy of products.
const filesPod = `version: v1
kind: Spicepod
name: files
datasets:
  - from: file:data/products.csv
    name: products
    acceleration:
      enabled: true
      engine: duckdb
      mode: file
      params: {file_watcher: enabled}
  - from: localpod:products
    name: products_mem
    acceleration: {enabled: true}
  - from: file://data/orders.csv
    name: orders
    time_column: created_at
    acceleration:
      enabled: true
      refresh_mode: append
      refresh_check_interval: 100ms
      primary_key: id
  - from: file:data/events.jsonl
    name: events
    acceleration: {enabled: true}
  - from: file:data/metrics.parquet
    name: metrics
  - from: duckdb:shop.main.archive
    name: archive
    params: {duckdb_open: data/shop.duckdb}
    acceleration: {enabled: true}
views:
  - name: rankings
    sql: |
      with a as (SELECT products_mem.id, sum(count) as count FROM orders INNER JOIN products_mem
      ON orders.product_id = products_mem.id GROUP BY products_mem.id)
      select name, count from products_mem left join a on products_mem.id = a.id
      order by count desc nulls last, name limit 5
`

// TestLocalConnectorsAccelerateAndChain loads CSV, JSON, Parquet and DuckDB files,
// serves the recipe's view over them, and follows changes to the files through a
// localpod child and on to a second runtime chained with flightsql.
func TestLocalConnectorsAccelerateAndChain(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	writeFile(t, filepath.Join(data, "products.csv"), "id,name\n1,Laptop\n2,Phone\n3,Tablet\n4,Monitor\n")
	writeFile(t, filepath.Join(data, "orders.csv"), "id,product_id,count,created_at\n"+
		"1,1,10,2026-01-01 00:00:00\n2,2,20,2026-01-01 00:00:01\n3,3,5,2026-01-01 00:00:02\n")
	writeFile(t, filepath.Join(data, "events.jsonl"), `{"id": 1, "kind": "signup"}`+"\n"+`{"id": 2, "kind": "order"}`+"\n")
	duckdbExec(t, "", fmt.Sprintf("COPY (SELECT 'cpu' AS name, 0.5::DOUBLE AS value) TO '%s' (FORMAT parquet)", filepath.Join(data, "metrics.parquet")))
	duckdbExec(t, filepath.Join(data, "shop.duckdb"), "CREATE TABLE archive (id INTEGER, note VARCHAR)", "INSERT INTO archive VALUES (1, 'old')")

	a, err := runtimeIn(t, dir, filesPod)
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t)
	for sql, want := range map[string]string{
		"SELECT * FROM rankings":                   `[{"name":"Phone","count":20},{"name":"Laptop","count":10},{"name":"Tablet","count":5},{"name":"Monitor","count":null}]`,
		"SELECT kind FROM events ORDER BY id":      `[{"kind":"signup"},{"kind":"order"}]`,
		"SELECT name, value FROM metrics":          `[{"name":"cpu","value":0.5}]`,
		"SELECT note FROM archive":                 `[{"note":"old"}]`,
		"SELECT count(*) AS n FROM products_mem":   `[{"n":4}]`,
		"SELECT count(*) AS n FROM orders":         `[{"n":3}]`,
		"SELECT name FROM products WHERE id = '2'": `[{"name":"Phone"}]`,
	} {
		if got := a.query(t, sql, 0); got.code != 200 || strings.TrimSpace(got.body) != want {
			t.Errorf("%s = %d %s, want %s", sql, got.code, got.body, want)
		}
	}

	b, err := runtimeIn(t, t.TempDir(), fmt.Sprintf(`version: v1
kind: Spicepod
name: chained
datasets:
  - from: flightsql:products_mem
    name: products
    params: {flightsql_endpoint: http://%s}
    acceleration: {enabled: true}
`, a.Flight.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	b.waitReady(t)

	// A new product in the CSV: the watcher refreshes products, its localpod
	// child follows, and so does the chained runtime; none has an interval.
	writeFile(t, filepath.Join(data, "products.csv"), "id,name\n1,Laptop\n2,Phone\n3,Tablet\n4,Monitor\n5,Camera\n")
	for _, r := range []*runtime{a, b} {
		table := "products_mem"
		if r == b {
			table = "products"
		}
		waitFor(t, "the new product in "+table, func() bool {
			return strings.Contains(r.query(t, "SELECT name FROM "+table+" WHERE id = 5", 0, "Cache-Control", "no-cache").body, "Camera")
		})
	}
	pa, pb := a.query(t, "SELECT count(*) AS n FROM products_mem", 0), b.query(t, "SELECT count(*) AS n FROM products", 0)
	if pa.position == 0 || pb.position < pa.position {
		t.Errorf("positions: runtime a %s, chained b %s; want b to reflect at least a's non-zero position", pa.position, pb.position)
	}

	// New orders appended to the CSV: the append refresh takes them once, keeping
	// the overlap's rows once.
	writeFile(t, filepath.Join(data, "orders.csv"), "id,product_id,count,created_at\n"+
		"1,1,10,2026-01-01 00:00:00\n2,2,20,2026-01-01 00:00:01\n3,3,5,2026-01-01 00:00:02\n4,5,50,2026-01-01 00:00:02\n5,4,1,2026-01-01 00:00:03\n")
	waitFor(t, "the appended orders", func() bool {
		return strings.Contains(a.query(t, "SELECT count(*) AS n, count(DISTINCT id) AS d FROM orders", 0, "Cache-Control", "no-cache").body, `"n":5,"d":5`)
	})
	if got, want := a.query(t, "SELECT * FROM rankings", 0, "Cache-Control", "no-cache").body, `{"name":"Camera","count":50}`; !strings.Contains(got, want) {
		t.Errorf("rankings after new orders = %s, want it to contain %s", got, want)
	}
}

// Upstream features this runtime does not serve are refused at start, naming the
// feature and what to use instead; so are mistakes in the local connectors.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.csv"), "id\n1\n")
	ds := func(body string) string {
		return "version: v1\nkind: Spicepod\nname: refused\ndatasets:\n" + body
	}
	for _, tc := range []struct {
		name string
		pod  string
		want []string
	}{
		{name: "s3", pod: ds("  - {from: 's3://bucket/orders.parquet', name: orders}\n"), want: []string{"s3:", "Amazon S3", "file:"}},
		{name: "https", pod: ds("  - {from: 'https://example.com/orders.csv', name: orders}\n"), want: []string{"https:", "download", "file:"}},
		{name: "mysql", pod: ds("  - {from: 'mysql:orders', name: orders}\n"), want: []string{"mysql:", "MySQL", "postgres:, flightsql:, spice.ai:, file:, duckdb: and localpod:"}},
		{name: "made-up connector", pod: ds("  - {from: 'nosuch:orders', name: orders}\n"), want: []string{`"nosuch"`, "file:"}},
		{name: "sqlite engine", pod: ds("  - {from: 'file:a.csv', name: a, acceleration: {enabled: true, engine: sqlite}}\n"), want: []string{"sqlite", "engine: duckdb"}},
		{name: "cayenne engine", pod: ds("  - {from: 'file:a.csv', name: a, acceleration: {enabled: true, engine: cayenne}}\n"), want: []string{"cayenne", "engine: duckdb"}},
		{name: "models", pod: ds("  - {from: 'file:a.csv', name: a}\nmodels:\n  - {from: 'openai:gpt-4o', name: m}\n"), want: []string{"models", "datasets and views only"}},
		{name: "changes from a file", pod: ds("  - {from: 'file:a.csv', name: a, acceleration: {enabled: true, refresh_mode: changes, primary_key: id, on_conflict: {id: upsert}}}\n"), want: []string{"changes", "postgres:", "full and append"}},
		{name: "missing file", pod: ds("  - {from: 'file:nope.csv', name: a}\n"), want: []string{filepath.Join(dir, "nope.csv"), "does not exist", "spicepod.yaml"}},
		{name: "unknown file param", pod: ds("  - {from: 'file:a.csv', name: a, params: {csv_sep: ';'}}\n"), want: []string{"csv_sep", "csv_delimiter"}},
		{name: "missing duckdb file", pod: ds("  - {from: 'duckdb:orders', name: a, params: {duckdb_open: nope.db}}\n"), want: []string{filepath.Join(dir, "nope.db"), "does not exist"}},
		{name: "localpod of nothing", pod: ds("  - {from: 'file:a.csv', name: a}\n  - {from: 'localpod:b', name: c}\n"), want: []string{"localpod:b", "no dataset", "a"}},
		{name: "localpod of itself", pod: ds("  - {from: 'localpod:a', name: a}\n"), want: []string{"reads the dataset itself"}},
		{name: "localpod loop", pod: ds("  - {from: 'localpod:b', name: a}\n  - {from: 'localpod:a', name: b}\n"), want: []string{"loop"}},
		{name: "localpod params", pod: ds("  - {from: 'file:a.csv', name: a}\n  - {from: 'localpod:a', name: b, params: {x: y}}\n"), want: []string{"localpod connector takes no params"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runtimeIn(t, dir, tc.pod)
			if err == nil {
				t.Fatal("the runtime started")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
