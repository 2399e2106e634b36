//go:build duckdb_arrow

package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/pgtest"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// The recipe's first spicepod: loads, turns ready, and its view equals the same
// SQL in Postgres, before and after a new order.
func TestRecipeRankingEqualsPostgres(t *testing.T) {
	dsn, params := MustDatabase(t, pg.Get(t), recipeSchema)
	rt := MustRuntime(t, recipePod(params, "1s"))
	rt.waitReady(t)

	got := rt.query(t, "SELECT * FROM rankings", 0).rows(t)
	if want := pgRows(t, dsn, rankingSQL); !equal(got, want) {
		t.Fatalf("rankings=%v, want %v (Postgres)", got, want)
	}
	if got, want := got[len(got)-1], "Monitor:null"; got != want {
		t.Fatalf("a product without orders: %s, want %s", got, want)
	}

	token := mustWrite(t, dsn, "INSERT INTO orders (product_id, count) VALUES (4, 100)")
	a := rt.query(t, "SELECT * FROM rankings", token)
	if want := pgRows(t, dsn, rankingSQL); !equal(a.rows(t), want) {
		t.Fatalf("after a new order: rankings=%v, want %v", a.rows(t), want)
	}
	if a.position < token {
		t.Fatalf("answer reflects %s, want at least the write's %s", a.position, token)
	}
}

// A full refresh swaps the table atomically: readers see the old or the new
// generation of rows, never a mix or a partial table.
func TestFullRefreshSwapUnderConcurrentReads(t *testing.T) {
	const n = 5000
	dsn, params := MustDatabase(t, pg.Get(t), `CREATE TABLE items (id int PRIMARY KEY, gen int NOT NULL);
		INSERT INTO items SELECT i, 0 FROM generate_series(1, 5000) i;`)
	rt := MustRuntime(t, fmt.Sprintf(`version: v1
kind: Spicepod
name: swap
datasets:
  - from: postgres:items
    name: items
    params: %s
    acceleration: {enabled: true}
`, params))
	rt.waitReady(t)

	var stop atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				a := rt.query(t, "SELECT count(*) AS n, min(gen) AS lo, max(gen) AS hi FROM items", 0, "Cache-Control", "no-cache")
				want := fmt.Sprintf(`"n":%d`, n)
				if a.code != http.StatusOK || !strings.Contains(a.body, want) || !sameGen(a.body) {
					errs <- fmt.Sprintf("status %d: %s", a.code, a.body)
					return
				}
				reads.Add(1)
			}
		}()
	}
	for gen := 1; gen <= 5; gen++ {
		token := mustWrite(t, dsn, "UPDATE items SET gen = $1", gen)
		if code, body := rt.post(t, "/v1/datasets/items/acceleration/refresh"); code != http.StatusCreated {
			t.Fatalf("refresh: %d %s", code, body)
		}
		if a := rt.query(t, "SELECT max(gen) AS g FROM items", token); a.code != http.StatusOK || !strings.Contains(a.body, fmt.Sprintf(`"g":%d`, gen)) {
			t.Fatalf("generation %d not visible: %d %s", gen, a.code, a.body)
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("a reader saw a partial or mixed table: %s", e)
	}
	if reads.Load() == 0 {
		t.Fatal("no concurrent read completed")
	}
}

func sameGen(body string) bool {
	var lo, hi int
	i := strings.Index(body, `"lo":`)
	j := strings.Index(body, `"hi":`)
	if i < 0 || j < 0 {
		return false
	}
	fmt.Sscanf(body[i+5:], "%d", &lo)
	fmt.Sscanf(body[j+5:], "%d", &hi)
	return lo == hi
}

// Append mode with an overlap re-reads the boundary: rows committed later with the
// boundary's timestamp are neither lost nor duplicated.
func TestAppendKeepsBoundaryRowsExactlyOnce(t *testing.T) {
	dsn, params := MustDatabase(t, pg.Get(t), `CREATE TABLE events (id int NOT NULL, ts timestamptz NOT NULL);
		INSERT INTO events VALUES (1, '2026-01-01 00:00:00+00'), (2, '2026-01-01 00:00:01+00');`)
	rt := MustRuntime(t, fmt.Sprintf(`version: v1
kind: Spicepod
name: appender
datasets:
  - from: postgres:events
    name: events
    time_column: ts
    params: %s
    acceleration: {enabled: true, refresh_mode: append, refresh_append_overlap: 1s}
`, params))
	rt.waitReady(t)
	steps := []string{
		// Same timestamp as the boundary, and an exact duplicate row of an existing one.
		"INSERT INTO events VALUES (3, '2026-01-01 00:00:01+00'), (2, '2026-01-01 00:00:01+00')",
		"INSERT INTO events VALUES (4, '2026-01-01 00:00:02+00')",
		"INSERT INTO events VALUES (5, '2026-01-01 00:00:02+00')",
	}
	for _, step := range steps {
		token := mustWrite(t, dsn, step)
		if code, body := rt.post(t, "/v1/datasets/events/acceleration/refresh"); code != http.StatusCreated {
			t.Fatalf("refresh: %d %s", code, body)
		}
		a := rt.query(t, "SELECT string_agg(id::VARCHAR, ',' ORDER BY id, ts) AS ids FROM events", token)
		want := pgString(t, dsn, "SELECT string_agg(id::text, ',' ORDER BY id, ts) FROM events")
		if !strings.Contains(a.body, `"ids":"`+want+`"`) {
			t.Fatalf("after %q: %s, want ids %s", step, a.body, want)
		}
	}
}

func pgString(tb testing.TB, dsn, sql string) string {
	tb.Helper()
	rows := pgRows(tb, dsn, "SELECT ("+sql+")::text, NULL::bigint")
	return strings.TrimSuffix(rows[0], ":null")
}

// Postgres unreachable at start: the runtime serves, is not ready, says why, and
// recovers on its own when Postgres comes up. Later, a failed refresh keeps the
// old data and reports the dataset as not fresh.
func TestSourceDownAtStartAndDuringRefresh(t *testing.T) {
	p := pgtest.Start(t)
	dsn, params := MustDatabase(t, p, recipeSchema)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	rt := MustRuntime(t, recipePod(params, "1s"))
	if code, body := rt.get(t, "/v1/ready"); code != http.StatusServiceUnavailable {
		t.Fatalf("ready with Postgres down: %d %s", code, body)
	}
	waitFor(t, "a load error", func() bool {
		a := rt.query(t, "SELECT * FROM rankings", 0)
		return a.code == http.StatusServiceUnavailable && strings.Contains(a.body, "not ready") && strings.Contains(a.body, "last error")
	})
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	rt.waitReady(t)
	before := rt.query(t, "SELECT * FROM rankings", 0).rows(t)
	if want := pgRows(t, dsn, rankingSQL); !equal(before, want) {
		t.Fatalf("after recovery: %v, want %v", before, want)
	}

	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dataset to report a failed refresh", func() bool {
		_, body := rt.get(t, "/v1/datasets?status=true")
		return strings.Contains(body, `"fresh": false`) && strings.Contains(body, `"last_error"`)
	})
	if got := rt.query(t, "SELECT * FROM rankings", 0).rows(t); !equal(got, before) {
		t.Fatalf("with the source down: %v, want the last good data %v", got, before)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	token := mustWrite(t, dsn, "INSERT INTO orders (product_id, count) VALUES (3, 50)")
	if got, want := rt.query(t, "SELECT * FROM rankings", token).rows(t), pgRows(t, dsn, rankingSQL); !equal(got, want) {
		t.Fatalf("after the source came back: %v, want %v", got, want)
	}
}

// The HTTP API's status codes and formats, against the real engine.
func TestHTTPAPI(t *testing.T) {
	_, params := MustDatabase(t, pg.Get(t), recipeSchema)
	rt := MustRuntime(t, recipePod(params, "10s"))
	rt.waitReady(t)
	for _, tc := range []struct {
		name, sql, accept string
		code              int
		want              string
	}{
		{"json", "SELECT name FROM products ORDER BY id LIMIT 1", "", 200, `[{"name":"Laptop"}]`},
		{"csv", "SELECT id, name FROM products ORDER BY id LIMIT 1", "text/csv", 200, "id,name\n1,Laptop\n"},
		{"text", "SELECT name FROM products ORDER BY id LIMIT 1", "text/plain", 200, "Laptop"},
		{"bad sql", "SELEC 1", "", 400, "syntax error"},
		{"unknown table", "SELECT * FROM nope", "", 400, "nope"},
		{"write refused", "DELETE FROM orders", "", 400, "read-only"},
		{"file access refused", "SELECT * FROM read_csv('/etc/passwd')", "", 400, "read_csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, rt.url+"/v1/sql", strings.NewReader(tc.sql))
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b strings.Builder
			_, _ = fmt.Fprint(&b, readAll(resp))
			if resp.StatusCode != tc.code || !strings.Contains(b.String(), tc.want) {
				t.Fatalf("%s: %d %q, want %d containing %q", tc.sql, resp.StatusCode, b.String(), tc.code, tc.want)
			}
			if tc.code == 200 && resp.Header.Get("Spice-Position") == "" {
				t.Fatal("no Spice-Position header")
			}
		})
	}
	for _, tc := range []struct {
		path string
		code int
	}{
		{"/v1/datasets/orders/acceleration/refresh", 201},
		{"/v1/datasets/nope/acceleration/refresh", 404},
	} {
		if code, body := rt.post(t, tc.path); code != tc.code {
			t.Fatalf("POST %s: %d %s, want %d", tc.path, code, body, tc.code)
		}
	}
	if code, body := rt.get(t, "/health"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Fatalf("/health: %d %q", code, body)
	}
	if _, body := rt.get(t, "/v1/datasets?status=true"); !strings.Contains(body, `"watermark"`) || !strings.Contains(body, `"rankings"`) {
		t.Fatalf("/v1/datasets?status=true lacks watermark or the view: %s", body)
	}
	// Results cache: a repeated query hits when no input changed in between. The
	// refresh triggered above (and the periodic one) may land between the two
	// queries and rightly invalidate the entry, so the pair is judged only when
	// the refresh counters show that nothing was refreshed around it.
	q := "SELECT * FROM rankings"
	for attempt := 0; ; attempt++ {
		before := rt.refreshes(t)
		rt.query(t, q, 0)
		second := rt.query(t, q, 0)
		if rt.refreshes(t) != before {
			if attempt == 10 {
				t.Fatal("the datasets kept refreshing; could not test the cache")
			}
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if second.cache != "HIT" {
			t.Fatalf("second identical query with no refresh in between: cache %q, want HIT", second.cache)
		}
		break
	}
}

func readAll(resp *http.Response) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// One failing dataset blocks neither the views nor the queries that do not read
// it; a dataset with ready_state: on_registration is read from its source until it
// loads; a position that never comes fails clearly.
func TestFailuresStayLocal(t *testing.T) {
	_, params := MustDatabase(t, pg.Get(t), recipeSchema)
	rt := MustRuntime(t, fmt.Sprintf(`version: v1
kind: Spicepod
name: partial
datasets:
  - from: postgres:public.products
    name: products
    params: %[1]s
    acceleration: {enabled: true}
  - from: postgres:public.missing_table
    name: broken
    params: %[1]s
    acceleration: {enabled: true}
  - from: postgres:public.orders
    name: orders
    ready_state: on_registration
    params: %[1]s
    acceleration:
      enabled: true
      # Fails at load on purpose (division by zero), so the dataset never loads.
      refresh_sql: SELECT * FROM orders WHERE count / 0 = 1
views:
  - name: product_names
    sql: SELECT name FROM products ORDER BY id
`, params))
	waitFor(t, "the view over the healthy dataset", func() bool {
		return rt.query(t, "SELECT count(*) AS n FROM product_names", 0).code == http.StatusOK
	})
	if code, _ := rt.get(t, "/v1/ready"); code != http.StatusServiceUnavailable {
		t.Fatalf("/v1/ready=%d with a broken dataset, want 503", code)
	}
	waitFor(t, "the broken dataset's error", func() bool {
		a := rt.query(t, "SELECT * FROM broken", 0)
		return a.code == http.StatusServiceUnavailable && strings.Contains(a.body, "broken") && strings.Contains(a.body, "missing_table")
	})
	// orders never loads, but on_registration reads Postgres meanwhile.
	if a := rt.query(t, "SELECT sum(count) AS total FROM orders", 0); a.code != http.StatusOK || !strings.Contains(a.body, `"total":35`) {
		t.Fatalf("on_registration read: %d %s, want total 35 from the source", a.code, a.body)
	}
	a := rt.query(t, "SELECT * FROM product_names", 0xFFFFFFFFFF)
	if a.code != http.StatusGatewayTimeout || !strings.Contains(a.body, "not reached") {
		t.Fatalf("unreachable position: %d %s, want 504 saying it was not reached", a.code, a.body)
	}
}

// Acceleration options beyond the recipe: retention, on_zero_results: use_source,
// indexes, and append with on_conflict: upsert.
func TestAccelerationOptions(t *testing.T) {
	dsn, params := MustDatabase(t, pg.Get(t), recipeSchema+`
		INSERT INTO orders (product_id, count, created_at) VALUES (1, 7, now() - interval '3 days');`)
	rt := MustRuntime(t, fmt.Sprintf(`version: v1
kind: Spicepod
name: options
datasets:
  - from: postgres:public.orders
    name: recent_orders
    time_column: created_at
    params: %[1]s
    acceleration:
      enabled: true
      retention_check_enabled: true
      retention_period: 1d
      retention_check_interval: 1s
      indexes: {product_id: enabled}
  - from: postgres:public.orders
    name: big_orders
    params: %[1]s
    acceleration:
      enabled: true
      refresh_sql: SELECT * FROM big_orders WHERE count > 1000
      on_zero_results: use_source
  - from: postgres:public.orders
    name: upserted
    time_column: created_at
    params: %[1]s
    acceleration:
      enabled: true
      refresh_mode: append
      primary_key: id
      on_conflict: {id: upsert}
`, params))
	rt.waitReady(t)
	waitFor(t, "retention to drop the 3-day-old order", func() bool {
		return strings.Contains(rt.query(t, "SELECT count(*) AS n FROM recent_orders", 0).body, `"n":3`)
	})
	// duckdb_indexes() is refused to clients; read it as the runtime does.
	res, err := rt.Store.Query(context.Background(), engine.StoreQuery{SQL: "SELECT count(*) AS n FROM duckdb_indexes() WHERE table_name = 'recent_orders'"})
	if err != nil {
		t.Fatal(err)
	}
	n := res.Records[0].Column(0).ValueStr(0)
	res.Release()
	if n != "1" {
		t.Fatalf("indexes: %s, want one index on recent_orders", n)
	}
	// Nothing matches refresh_sql, so the accelerated table is empty: the source answers.
	if a := rt.query(t, "SELECT id FROM big_orders WHERE count = 10", 0); a.body != `[{"id":1}]`+"\n" {
		t.Fatalf("use_source: %s, want the source's row", a.body)
	}
	token := mustWrite(t, dsn, "UPDATE orders SET count = 99, created_at = now() WHERE id = 1")
	if code, body := rt.post(t, "/v1/datasets/upserted/acceleration/refresh"); code != http.StatusCreated {
		t.Fatalf("refresh: %d %s", code, body)
	}
	a := rt.query(t, "SELECT count(*) AS n, max(count) FILTER (WHERE id = 1) AS c FROM upserted", token)
	if !strings.Contains(a.body, `"n":4`) || !strings.Contains(a.body, `"c":99`) {
		t.Fatalf("append upsert: %s, want 4 rows with order 1 updated to 99", a.body)
	}
}

// The recipe's first spicepod with refresh_mode: changes: every write is visible
// through its token, the view equals Postgres, a clean shutdown of a memory-mode
// runtime leaves no replication slot behind, and the change feed's log lines
// name their slot once.
func TestRecipeWithChangeDataCapture(t *testing.T) {
	dsn, params := MustDatabase(t, pg.Get(t), recipeSchema)
	pod := strings.ReplaceAll(recipePod(params, "1s"), "refresh_check_interval: 1s", "refresh_mode: changes")
	var logs lockedBuffer
	rt := MustRuntimeLogged(t, pod, &logs)
	rt.waitReady(t)
	for i := 0; i < 20; i++ {
		token := mustWrite(t, dsn, "INSERT INTO orders (product_id, count) VALUES ($1, $2)", i%4+1, i+1)
		a := rt.query(t, "SELECT * FROM rankings", token)
		if want := pgRows(t, dsn, rankingSQL); !equal(a.rows(t), want) {
			t.Fatalf("after write %d: %v, want %v", i, a.rows(t), want)
		}
	}
	_, body := rt.get(t, "/v1/datasets?status=true")
	if !strings.Contains(body, `"refresh_mode": "changes"`) || !strings.Contains(body, `"lag_seconds"`) {
		t.Fatalf("status lacks the change feed's freshness: %s", body)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if slots := pgString(t, dsn, "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()"); slots != "0" {
		t.Fatalf("%s replication slots left after a clean shutdown, want 0", slots)
	}
	var feedLines int
	for line := range strings.Lines(logs.String()) {
		if n := strings.Count(line, " slot="); n > 0 {
			feedLines++
			if n != 1 {
				t.Errorf("log line names its slot %d times: %s", n, line)
			}
		}
	}
	if feedLines < 2 { // the snapshot, the slot dropped at shutdown
		t.Fatalf("%d log lines name a slot, want the snapshot's and the drop's:\n%s", feedLines, logs.String())
	}
}

// A view with an acceleration block is materialized into a table of its own and
// recomputed after its inputs change, with the inputs' position as its watermark.
func TestAcceleratedViewFollowsItsInputs(t *testing.T) {
	dsn, params := MustDatabase(t, pg.Get(t), recipeSchema)
	pod := recipePod(params, "1s") + `    acceleration:
      enabled: true
`
	rt := MustRuntime(t, pod)
	rt.waitReady(t)
	if ok, err := rt.Store.TableExists(context.Background(), "rankings"); err != nil || !ok {
		t.Fatalf("rankings is not materialized as a table: %v", err)
	}
	token := mustWrite(t, dsn, "INSERT INTO orders (product_id, count) VALUES (3, 1000)")
	a := rt.query(t, "SELECT * FROM rankings", token)
	if want := pgRows(t, dsn, rankingSQL); !equal(a.rows(t), want) {
		t.Fatalf("materialized view after a new order: %v, want %v", a.rows(t), want)
	}
	if a.position < token {
		t.Fatalf("view answer reflects %s, want at least %s", a.position, token)
	}
}
