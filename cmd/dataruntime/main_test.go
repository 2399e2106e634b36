//go:build duckdb_arrow

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqrs-spice/cqrs/internal/pgtest"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// pg is the Postgres the package's tests share, started by the first that needs it.
var pg pgtest.Shared

func TestMain(m *testing.M) { pg.Main(m) }

// recipeSchema is the recipe's tables and first orders.
const recipeSchema = `
CREATE TABLE products (id serial PRIMARY KEY, name text NOT NULL UNIQUE);
CREATE TABLE orders (id bigserial PRIMARY KEY, product_id int NOT NULL REFERENCES products(id),
  count int NOT NULL CHECK (count > 0), created_at timestamptz NOT NULL DEFAULT now());
INSERT INTO products (name) VALUES ('Laptop'), ('Phone'), ('Tablet'), ('Monitor');
INSERT INTO orders (product_id, count) VALUES (1, 10), (2, 20), (3, 5);`

// rankingSQL is the recipe's view, with ties broken by name and NULLs last so that
// Postgres and DuckDB order alike.
const rankingSQL = `with a as (SELECT products.id, sum(count) as count FROM orders INNER JOIN products
ON orders.product_id = products.id GROUP BY products.id)
select name, count from products left join a on products.id = a.id
order by count desc nulls last, name limit 5`

type runtime struct {
	*Main
	url string
}

// MustDatabase creates a fresh database holding the recipe's schema and returns
// its DSN and the spicepod params that reach it.
func MustDatabase(tb testing.TB, p *pgtest.Postgres, schema string) (string, string) {
	tb.Helper()
	dsn := p.NewDatabase(tb)
	mustExec(tb, dsn, schema)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	params := fmt.Sprintf(`{pg_host: %s, pg_port: "%d", pg_db: %s, pg_user: %s, pg_pass: %s, pg_sslmode: disable}`,
		cfg.Host, cfg.Port, cfg.Database, cfg.User, cfg.Password)
	return dsn, params
}

// MustRuntime writes a spicepod and runs the runtime in-process until cleanup.
func MustRuntime(tb testing.TB, pod string) *runtime {
	tb.Helper()
	return MustRuntimeLogged(tb, pod, io.Discard)
}

// MustRuntimeLogged is MustRuntime with the runtime's log also written to w.
func MustRuntimeLogged(tb testing.TB, pod string, w io.Writer) *runtime {
	tb.Helper()
	dir := tb.TempDir()
	path := filepath.Join(dir, "spicepod.yaml")
	if err := os.WriteFile(path, []byte(pod), 0o644); err != nil {
		tb.Fatal(err)
	}
	cfg := Config{Spicepod: path, HTTPAddr: "127.0.0.1:0", FlightAddr: "127.0.0.1:0", DataDir: dir, LogLevel: slog.LevelDebug,
		MinPositionTimeout: 2 * time.Second}
	m := NewMain(cfg, slog.New(slog.NewTextHandler(io.MultiWriter(w, testWriter{tb}), &slog.HandlerOptions{Level: slog.LevelInfo})))
	if err := m.Run(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return &runtime{Main: m, url: "http://" + m.HTTP.Addr()}
}

type testWriter struct{ tb testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func recipePod(params, interval string) string {
	return fmt.Sprintf(`version: v1
kind: Spicepod
name: sample
datasets:
  - from: postgres:public.products
    name: products
    params: %[1]s
    acceleration: {enabled: true, refresh_check_interval: %[2]s}
  - from: postgres:public.orders
    name: orders
    params: %[1]s
    acceleration: {enabled: true, refresh_check_interval: %[2]s}
views:
  - name: rankings
    sql: |
      %[3]s
`, params, interval, strings.ReplaceAll(rankingSQL, "\n", "\n      "))
}

func mustExec(tb testing.TB, dsn, sql string, args ...any) {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}

// mustWrite runs sql and returns a read-your-writes token taken after the commit.
func mustWrite(tb testing.TB, dsn, sql string, args ...any) position.LSN {
	tb.Helper()
	mustExec(tb, dsn, sql, args...)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(context.Background())
	var s string
	if err := conn.QueryRow(context.Background(), "SELECT pg_current_wal_lsn()::text").Scan(&s); err != nil {
		tb.Fatal(err)
	}
	lsn, err := position.Parse(s)
	if err != nil {
		tb.Fatal(err)
	}
	return lsn
}

// pgRows runs a two-column (text, bigint) query in Postgres.
func pgRows(tb testing.TB, dsn, sql string) []string {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), sql)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var name string
		var count *int64
		if err := rows.Scan(&name, &count); err != nil {
			tb.Fatal(err)
		}
		out = append(out, rowString(name, count))
	}
	return out
}

func rowString(name string, count *int64) string {
	if count == nil {
		return name + ":null"
	}
	return fmt.Sprintf("%s:%d", name, *count)
}

type sqlAnswer struct {
	code     int
	body     string
	position position.LSN
	cache    string
}

// query posts SQL to /v1/sql, optionally with a minimum position.
func (r *runtime) query(tb testing.TB, sql string, min position.LSN, headers ...string) sqlAnswer {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.url+"/v1/sql", strings.NewReader(sql))
	if min != 0 {
		req.Header.Set(wire.HeaderMinPosition, min.String())
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	a := sqlAnswer{code: resp.StatusCode, body: string(body), cache: resp.Header.Get("Results-Cache-Status")}
	if v := resp.Header.Get(wire.HeaderPosition); v != "" {
		a.position, _ = position.Parse(v)
	}
	return a
}

// rows decodes a JSON answer of (name, count) rows.
func (a sqlAnswer) rows(tb testing.TB) []string {
	tb.Helper()
	if a.code != http.StatusOK {
		tb.Fatalf("status %d: %s", a.code, a.body)
	}
	var rows []struct {
		Name  string `json:"name"`
		Count *int64 `json:"count"`
	}
	if err := json.Unmarshal([]byte(a.body), &rows); err != nil {
		tb.Fatalf("decode %q: %v", a.body, err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = rowString(r.Name, r.Count)
	}
	return out
}

func (r *runtime) get(tb testing.TB, path string) (int, string) {
	tb.Helper()
	resp, err := http.Get(r.url + path)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func (r *runtime) post(tb testing.TB, path string) (int, string) {
	tb.Helper()
	resp, err := http.Post(r.url+path, "text/plain", nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// waitFor polls cond until it holds, failing after a generous deadline. It never
// asserts how long anything took.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// refreshes is the total of the refresh counters of every dataset and view.
func (r *runtime) refreshes(tb testing.TB) int64 {
	tb.Helper()
	_, body := r.get(tb, "/v1/datasets?status=true")
	var list []struct {
		Status *struct {
			Refreshes int64 `json:"refreshes"`
		} `json:"detail"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		tb.Fatalf("decode /v1/datasets?status=true %q: %v", body, err)
	}
	var n int64
	for _, d := range list {
		if d.Status != nil {
			n += d.Status.Refreshes
		}
	}
	return n
}

func (r *runtime) waitReady(tb testing.TB) {
	tb.Helper()
	waitFor(tb, "/v1/ready", func() bool { code, _ := r.get(tb, "/v1/ready"); return code == http.StatusOK })
}

func equal(a, b []string) bool {
	return strings.Join(a, ",") == strings.Join(b, ",")
}
