//go:build duckdb_arrow

package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer collects log lines; safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// upstreamPod serves the recipe's view over two CSV files and requires a key.
const upstreamPod = `version: v1
kind: Spicepod
name: upstream
datasets:
  - from: file:data/products.csv
    name: products
    acceleration: {enabled: true, params: {file_watcher: enabled}}
  - from: file:data/orders.csv
    name: orders
    acceleration: {enabled: true, params: {file_watcher: enabled}}
views:
  - name: rankings
    sql: |
      with a as (SELECT products.id, sum(count) as count FROM orders INNER JOIN products
      ON orders.product_id = products.id GROUP BY products.id)
      select name, count from products left join a on products.id = a.id
      order by count desc nulls last, name limit 5
runtime:
  auth:
    api-key: {enabled: true, keys: ["${env:TEST_UPSTREAM_KEY}"]}
`

// TestChainBySubscription runs the recipe's chain with refresh_mode: changes
// through the binary's wiring: runtime 2 subscribes to runtime 1's view with
// runtime 1's key, holds its rows, and follows a change of runtime 1's files.
func TestChainBySubscription(t *testing.T) {
	t.Setenv("TEST_UPSTREAM_KEY", "upstream-key")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data", "products.csv"), "id,name\n1,Laptop\n2,Phone\n3,Tablet\n")
	writeFile(t, filepath.Join(dir, "data", "orders.csv"), "id,product_id,count\n1,1,10\n2,2,20\n")
	a, err := runtimeIn(t, dir, upstreamPod)
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t)

	logs := &lockedBuffer{}
	pod := fmt.Sprintf(`version: v1
kind: Spicepod
name: materialized
datasets:
  - from: flightsql:rankings
    name: rankings
    params:
      flightsql_endpoint: http://%s
      flightsql_password: ${env:TEST_UPSTREAM_KEY}
    acceleration:
      enabled: true
      refresh_mode: changes
`, a.Flight.Addr())
	bdir := t.TempDir()
	path := filepath.Join(bdir, "spicepod.yaml")
	if err := os.WriteFile(path, []byte(pod), 0o644); err != nil {
		t.Fatal(err)
	}
	m := NewMain(Config{Spicepod: path, HTTPAddr: "127.0.0.1:0", FlightAddr: "127.0.0.1:0", DataDir: bdir, MinPositionTimeout: 2 * time.Second},
		slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})))
	t.Cleanup(func() { m.Close() })
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := &runtime{Main: m, url: "http://" + m.HTTP.Addr()}
	b.waitReady(t)

	const sql = "SELECT name, count FROM rankings ORDER BY count DESC NULLS LAST, name"
	if got, want := b.query(t, sql, 0).body, `[{"name":"Phone","count":20},{"name":"Laptop","count":10},{"name":"Tablet","count":null}]`; strings.TrimSpace(got) != want {
		t.Fatalf("runtime 2 = %s, want %s", got, want)
	}
	writeFile(t, filepath.Join(dir, "data", "orders.csv"), "id,product_id,count\n1,1,10\n2,2,20\n3,3,50\n")
	want := `[{"name":"Tablet","count":50},{"name":"Phone","count":20},{"name":"Laptop","count":10}]`
	waitFor(t, "runtime 2 to follow the change", func() bool {
		return strings.TrimSpace(b.query(t, sql, 0, "Cache-Control", "no-cache").body) == want
	})
	if got := strings.Count(logs.String(), "msg=subscribed"); got != 1 {
		t.Errorf("runtime 2 subscribed %d times, want 1; log:\n%s", got, logs)
	}
	if strings.Contains(logs.String(), "serves no subscriptions") {
		t.Errorf("runtime 2 fell back to whole reads; log:\n%s", logs)
	}
	if code, body := b.get(t, "/v1/datasets?status=true"); code != 200 || !strings.Contains(body, `"refresh_mode": "changes"`) {
		t.Errorf("status = %d %s, want refresh_mode changes", code, body)
	}
}

// TestRecipeChainBySubscription runs the recipe's two spicepods as shipped in
// shape: runtime 1 follows Postgres by logical replication and serves the
// rankings view; runtime 2 subscribes to it. After every write, runtime 2
// answers the write's token with the rankings Postgres computes, and runtime 1
// reports the view's subscription.
func TestRecipeChainBySubscription(t *testing.T) {
	dsn, params := MustDatabase(t, pg.Get(t), recipeSchema)
	a := MustRuntime(t, strings.ReplaceAll(recipePod(params, "1s"), "refresh_check_interval: 1s", "refresh_mode: changes"))
	a.waitReady(t)
	b := MustRuntime(t, fmt.Sprintf(`version: v1
kind: Spicepod
name: materialized
datasets:
  - from: flightsql:rankings
    name: rankings
    params: {flightsql_endpoint: http://%s}
    acceleration: {enabled: true, refresh_mode: changes}
`, a.Flight.Addr()))
	b.waitReady(t)
	for i := 0; i < 20; i++ {
		token := mustWrite(t, dsn, "INSERT INTO orders (product_id, count) VALUES ($1, $2)", i%4+1, i+1)
		got := b.query(t, "SELECT * FROM rankings ORDER BY count DESC NULLS LAST, name", token)
		if want := pgRows(t, dsn, rankingSQL); got.code != 200 || !equal(got.rows(t), want) {
			t.Fatalf("runtime 2 after write %d: %d %v, want %v", i, got.code, got.rows(t), want)
		}
	}
	_, body := a.get(t, "/v1/datasets?status=true")
	if !strings.Contains(body, `"subscription"`) || !strings.Contains(body, `"subscribers": 1`) {
		t.Errorf("runtime 1's status does not show the view's one subscriber: %s", body)
	}
}
