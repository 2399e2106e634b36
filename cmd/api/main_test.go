package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	main "github.com/cqrs-spice/cqrs/cmd/api"
	"github.com/cqrs-spice/cqrs/internal/pgtest"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// pg is the Postgres the package's tests share, started by the first that needs it.
var pg pgtest.Shared

func TestMain(m *testing.M) { pg.Main(m) }

// unreachable is an address where no runtime listens.
const unreachable = "127.0.0.1:1"

// MustRunMain runs the api's real wiring in-process against a fresh database with
// init.sql applied, on a free port, with both runtimes unreachable unless env says
// otherwise.
func MustRunMain(tb testing.TB, kv map[string]string) *main.Main {
	tb.Helper()
	dsn := pg.NewDatabase(tb)
	mustApplyInitSQL(tb, dsn)
	vars := map[string]string{
		"API_ADDR":                 "127.0.0.1:0",
		"POSTGRES_URL":             dsn,
		"ACCELERATED_FLIGHT_ADDR":  unreachable,
		"MATERIALIZED_FLIGHT_ADDR": unreachable,
	}
	for k, v := range kv {
		vars[k] = v
	}
	return runMain(tb, vars)
}

// runMain runs the api on exactly vars.
func runMain(tb testing.TB, vars map[string]string) *main.Main {
	tb.Helper()
	cfg, err := main.LoadConfig(env(vars))
	if err != nil {
		tb.Fatal(err)
	}
	m := main.NewMain()
	m.Config = cfg
	m.Logger = slog.New(slog.NewTextHandler(testWriter{tb}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if err := m.Run(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := m.Close(); err != nil {
			tb.Error(err)
		}
	})
	return m
}

type testWriter struct{ tb testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func mustApplyInitSQL(tb testing.TB, dsn string) {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	sql, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "init.sql"))
	if err != nil {
		tb.Fatalf("read init.sql: %v", err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.PgConn().Exec(ctx, string(sql)).ReadAll(); err != nil {
		tb.Fatalf("apply init.sql: %v", err)
	}
}

func mustExec(tb testing.TB, m *main.Main, sql string) {
	tb.Helper()
	if _, err := m.WritePool.Exec(context.Background(), sql); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}

func mustLSN(tb testing.TB, m *main.Main) position.LSN {
	tb.Helper()
	var text string
	if err := m.WritePool.QueryRow(context.Background(), "SELECT pg_current_wal_lsn()::text").Scan(&text); err != nil {
		tb.Fatal(err)
	}
	lsn, err := position.Parse(text)
	if err != nil {
		tb.Fatal(err)
	}
	return lsn
}

func mustCount(tb testing.TB, m *main.Main) int {
	tb.Helper()
	var n int
	if err := m.WritePool.QueryRow(context.Background(), "SELECT count(*) FROM orders").Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

type answer struct {
	status int
	header http.Header
	body   string
}

// do sends one request to the running api.
func do(tb testing.TB, m *main.Main, method, path, body string, header ...string) answer {
	tb.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, m.Server.URL()+path, r)
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func errorOf(tb testing.TB, a answer) string {
	tb.Helper()
	var body struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.body), &body); err != nil {
		tb.Fatalf("error body %q: %v", a.body, err)
	}
	return body.Error
}

func TestOrders_WriteOneRowWithToken(t *testing.T) {
	m := MustRunMain(t, nil)
	rowsBefore := mustCount(t, m)
	before := mustLSN(t, m)

	a := do(t, m, "POST", "/orders", "")
	if a.status != http.StatusCreated {
		t.Fatalf("status=%d, want 201: %s", a.status, a.body)
	}
	after := mustLSN(t, m)
	token, err := position.Parse(a.header.Get("Spice-Position"))
	if err != nil {
		t.Fatal(err)
	}
	if !(before < token && token <= after) {
		t.Fatalf("token=%s, want in (%s, %s]", token, before, after)
	}
	if got, want := mustCount(t, m), rowsBefore+1; got != want {
		t.Fatalf("orders=%d, want %d", got, want)
	}
	var o struct {
		ID        int64  `json:"id"`
		ProductID int64  `json:"product_id"`
		Count     int64  `json:"count"`
		CreatedAt string `json:"created_at"`
	}
	dec := json.NewDecoder(strings.NewReader(a.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		t.Fatal(err)
	}
	if o.ID == 0 || o.ProductID < 1 || o.ProductID > 3 || o.Count < 1 || o.Count > 100 || o.CreatedAt == "" {
		t.Fatalf("order=%+v", o)
	}

	a = do(t, m, "POST", "/orders", `{"product_id": 3, "count": 5}`, "Content-Type", "application/json")
	if a.status != http.StatusCreated || !strings.Contains(a.body, `"product_id":3,"count":5`) {
		t.Fatalf("status=%d body=%s, want 201 with the order", a.status, a.body)
	}
	if got, want := mustCount(t, m), rowsBefore+2; got != want {
		t.Fatalf("orders=%d, want %d", got, want)
	}
}

func TestOrders_Rejected(t *testing.T) {
	m := MustRunMain(t, nil)
	rowsBefore := mustCount(t, m)
	for _, tt := range []struct {
		body   string
		status int
		msg    string
	}{
		{`{"product_id": 42, "count": 1}`, 422, "product 42 does not exist"},
		{`{"product_id": 1, "count": 0}`, 422, "count 0 is out of range: send an integer from 1 to 10000"},
		{`{"product_id": 1, "count": 10001}`, 422, "count 10001 is out of range"},
		{`{"product_id": 1, "count": 1, "discount": 5}`, 400, `unknown field "discount"`},
		{`{"product_id": 1, "count":`, 400, "malformed JSON"},
	} {
		a := do(t, m, "POST", "/orders", tt.body, "Content-Type", "application/json")
		if a.status != tt.status || !strings.HasPrefix(errorOf(t, a), tt.msg) && !strings.Contains(errorOf(t, a), tt.msg) {
			t.Errorf("%s: %d %s, want %d with %q", tt.body, a.status, a.body, tt.status, tt.msg)
		}
	}
	if got := mustCount(t, m); got != rowsBefore {
		t.Fatalf("orders=%d, want %d: a rejected order was written", got, rowsBefore)
	}
}

func TestOrders_Concurrent(t *testing.T) {
	const n = 100
	m := MustRunMain(t, map[string]string{"POSTGRES_POOL_SIZE": "5"}) // 100 clients queue on 5 connections
	rowsBefore := mustCount(t, m)
	var wg sync.WaitGroup
	statuses := make(chan string, n)
	for range n {
		wg.Go(func() {
			resp, err := http.Post(m.Server.URL()+"/orders", "", nil)
			if err != nil {
				statuses <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				statuses <- fmt.Sprintf("%d %s", resp.StatusCode, b)
			}
		})
	}
	wg.Wait()
	close(statuses)
	for s := range statuses {
		t.Error(s)
	}
	if got, want := mustCount(t, m), rowsBefore+n; got != want {
		t.Fatalf("orders=%d, want %d", got, want)
	}
}

func TestRanking_Postgres(t *testing.T) {
	m := MustRunMain(t, nil)
	// init.sql's three products and first orders, plus one product that never
	// sold and enough orders to reorder them.
	mustExec(t, m, `INSERT INTO products (name) VALUES ('zelda')`)
	mustExec(t, m, `INSERT INTO orders (product_id, count)
		SELECT id, 25 FROM products WHERE name = 'the most beautiful flower'`) // 10 + 25 = 35

	before := mustLSN(t, m)
	a := do(t, m, "GET", "/ranking", "")
	if a.status != 200 {
		t.Fatalf("status=%d: %s", a.status, a.body)
	}
	want := "==== Leading Products ====\n" +
		"        35 sold: the most beautiful flower\n" +
		"        30 sold: nintendo\n" +
		"        20 sold: the most delicious chocalate\n" +
		"         0 sold: zelda\n"
	if a.body != want {
		t.Fatalf("body=\n%s\nwant\n%s", a.body, want)
	}
	pos, err := position.Parse(a.header.Get("Spice-Position"))
	if err != nil {
		t.Fatal(err)
	}
	if after := mustLSN(t, m); !(before <= pos && pos <= after) {
		t.Fatalf("position=%s, want in [%s, %s]", pos, before, after)
	}

	a = do(t, m, "GET", "/ranking", "", "Accept", "application/json")
	if got, want := a.body, `[{"name":"the most beautiful flower","count":35},{"name":"nintendo","count":30},{"name":"the most delicious chocalate","count":20},{"name":"zelda","count":0}]`+"\n"; got != want {
		t.Fatalf("json=%s, want %s", got, want)
	}
}

func TestRanking_ReadYourWrite(t *testing.T) {
	m := MustRunMain(t, nil)
	a := do(t, m, "POST", "/orders", `{"product_id": 2, "count": 1000}`, "Content-Type", "application/json")
	if a.status != 201 {
		t.Fatalf("status=%d: %s", a.status, a.body)
	}
	token := a.header.Get("Spice-Position")
	a = do(t, m, "GET", "/ranking?min_position="+token, "")
	if a.status != 200 || !strings.Contains(a.body, "      1020 sold: the most delicious chocalate\n") {
		t.Fatalf("status=%d body=%s, want the write counted", a.status, a.body)
	}
	got, _ := position.Parse(a.header.Get("Spice-Position"))
	if want, _ := position.Parse(token); got < want {
		t.Fatalf("position=%s, want >= token %s", got, want)
	}
}

func TestRanking_RuntimeUnavailable(t *testing.T) {
	m := MustRunMain(t, nil)
	for path, name := range map[string]string{
		"/ranking-accelerated":  "accelerated runtime at " + unreachable + " is unavailable: ",
		"/ranking-materialized": "materialized runtime at " + unreachable + " is unavailable: ",
	} {
		a := do(t, m, "GET", path, "")
		if a.status != http.StatusServiceUnavailable {
			t.Fatalf("%s: status=%d, want 503: %s", path, a.status, a.body)
		}
		if msg := errorOf(t, a); !strings.HasPrefix(msg, name) {
			t.Fatalf("%s: error=%q, want prefix %q", path, msg, name)
		}
		if a.header.Get("Retry-After") == "" {
			t.Fatalf("%s: no Retry-After", path)
		}
	}
}

func TestReadyz(t *testing.T) {
	m := MustRunMain(t, nil)
	a := do(t, m, "GET", "/readyz", "")
	if a.status != http.StatusServiceUnavailable {
		t.Fatalf("status=%d, want 503: %s", a.status, a.body)
	}
	var r struct {
		Status       string
		Dependencies map[string]struct{ Status, Error string }
	}
	if err := json.Unmarshal([]byte(a.body), &r); err != nil {
		t.Fatal(err)
	}
	if r.Status != "unavailable" || r.Dependencies["postgres"].Status != "ok" ||
		r.Dependencies["accelerated"].Status != "unavailable" || r.Dependencies["materialized"].Status != "unavailable" ||
		!strings.HasPrefix(r.Dependencies["accelerated"].Error, "accelerated runtime at ") {
		t.Fatalf("readyz=%+v", r)
	}
	if a := do(t, m, "GET", "/healthz", ""); a.status != 200 {
		t.Fatalf("healthz status=%d", a.status)
	}
}

// A /ranking that finds no free connection answers 503 and says which setting to
// raise; orders, on their own pool, are still taken meanwhile.
func TestRanking_PoolExhausted(t *testing.T) {
	m := MustRunMain(t, map[string]string{"POSTGRES_POOL_SIZE": "1", "POSTGRES_ACQUIRE_TIMEOUT": "100ms"})
	conn, err := m.ReadPool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	a := do(t, m, "GET", "/ranking", "")
	if a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") != "1" {
		t.Fatalf("status=%d Retry-After=%q, want 503 and 1: %s", a.status, a.header.Get("Retry-After"), a.body)
	}
	if msg, want := errorOf(t, a), "raise POSTGRES_POOL_SIZE (now 1)"; !strings.Contains(msg, want) {
		t.Fatalf("error=%q, want it to contain %q", msg, want)
	}
	before := mustCount(t, m)
	if a := do(t, m, "POST", "/orders", ""); a.status != http.StatusCreated {
		t.Fatalf("POST /orders with the ranking's pool exhausted: %d %s, want 201", a.status, a.body)
	}
	if got := mustCount(t, m); got != before+1 {
		t.Fatalf("orders=%d, want %d", got, before+1)
	}
}

// POST /orders that finds no free connection answers 503, names its own setting,
// and writes nothing.
func TestOrders_WritePoolExhausted(t *testing.T) {
	m := MustRunMain(t, map[string]string{"POSTGRES_WRITE_POOL_SIZE": "1", "POSTGRES_ACQUIRE_TIMEOUT": "100ms"})
	before := mustCount(t, m)
	conn, err := m.WritePool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a := do(t, m, "POST", "/orders", "")
	conn.Release()
	if a.status != http.StatusServiceUnavailable {
		t.Fatalf("status=%d, want 503: %s", a.status, a.body)
	}
	if msg, want := errorOf(t, a), "raise POSTGRES_WRITE_POOL_SIZE (now 1)"; !strings.Contains(msg, want) {
		t.Fatalf("error=%q, want it to contain %q", msg, want)
	}
	if got := mustCount(t, m); got != before {
		t.Fatalf("orders=%d after a refused order, want %d", got, before)
	}
}
