//go:build duckdb_arrow

package cdc_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres/cdc"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// waitTimeout bounds every wait for a condition; generous, as the machines are
// shared. Nothing asserts how long anything took.
const waitTimeout = 2 * time.Minute

// rankingsSQL is the recipe's view.
const rankingsSQL = `with a as (SELECT products.id, sum(count) as count FROM orders INNER JOIN products ON orders.product_id = products.id GROUP BY products.id) select name, count from products left join a on products.id = a.id order by count desc limit 5`

// recipeSchema is the recipe's two tables, plus a price and a timestamp so that
// decimals and times travel too.
var recipeSchema = []string{
	`CREATE TABLE products (id int PRIMARY KEY, name text NOT NULL)`,
	`CREATE TABLE orders (id bigserial PRIMARY KEY, product_id int NOT NULL, count int NOT NULL,
		price numeric(10,2), created_at timestamptz NOT NULL DEFAULT now())`,
}

// pod renders a spicepod with the recipe's datasets and view following dsn by
// refresh_mode changes; extra is appended to the datasets list.
func pod(dsn, mode string, tables ...string) string {
	if len(tables) == 0 {
		tables = []string{"products", "orders"}
	}
	var b strings.Builder
	b.WriteString("version: v1\nkind: Spicepod\nname: sample\ndatasets:\n")
	for _, t := range tables {
		fmt.Fprintf(&b, `  - from: postgres:public.%[1]s
    name: %[1]s
    params:
      pg_connection_string: "%[2]s"
    acceleration:
      enabled: true
      engine: duckdb
      mode: %[3]s
      refresh_mode: changes
`, t, dsn, mode)
	}
	if slices.Contains(tables, "orders") && slices.Contains(tables, "products") {
		fmt.Fprintf(&b, "views:\n  - name: rankings\n    sql: %s\n", rankingsSQL)
	}
	return b.String()
}

// runtime is the real wiring of cmd/dataruntime for one spicepod: DuckDB, the
// engine, and one change feed.
type runtime struct {
	eng     *engine.Engine
	db      *duckdb.DB
	feed    *cdc.Feed
	cfg     cdc.Config
	reg     *prometheus.Registry
	log     *syncBuffer
	mem     *memory.CheckedAllocator
	stopped bool
}

// startRuntime opens the store (path "" for memory), adds the spicepod's datasets
// and views, and starts the engine with the change feed. tweak may adjust the
// feed before it runs. The runtime is closed when the test ends.
func startRuntime(tb testing.TB, podYAML, path string, tweak func(*cdc.Feed)) *runtime {
	tb.Helper()
	ctx := context.Background()
	p, err := spicepod.Parse([]byte(podYAML), "spicepod.yaml", nil)
	if err != nil {
		tb.Fatalf("parse spicepod: %v", err)
	}
	r := &runtime{reg: prometheus.NewRegistry(), log: &syncBuffer{}, mem: memory.NewCheckedAllocator(memory.NewGoAllocator())}
	logger := slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.db = duckdb.New(path)
	if err := r.db.Open(ctx); err != nil {
		tb.Fatalf("open duckdb: %v", err)
	}
	r.eng = engine.New(r.db)
	r.eng.Logger = logger
	for _, ds := range p.Datasets {
		if err := r.eng.AddDataset(ds, nil); err != nil {
			tb.Fatal(err)
		}
	}
	for _, v := range p.Views {
		if err := r.eng.AddView(v); err != nil {
			tb.Fatal(err)
		}
	}
	cfgs, err := cdc.Configs(p.Name, "test", p.Datasets)
	if err != nil {
		tb.Fatalf("cdc.Configs: %v", err)
	}
	if len(cfgs) != 1 {
		tb.Fatalf("configs=%d, want 1", len(cfgs))
	}
	r.cfg = cfgs[0]
	r.feed = cdc.New(r.eng, r.db, r.cfg)
	r.feed.Logger = logger
	r.feed.Metrics = cdc.NewMetrics(r.reg)
	r.feed.Allocator = r.mem
	if tweak != nil {
		tweak(r.feed)
	}
	r.eng.AddFeed(r.feed)
	if err := r.eng.Open(ctx); err != nil {
		tb.Fatalf("open engine: %v", err)
	}
	tb.Cleanup(func() {
		r.stop(tb)
		if tb.Failed() {
			tb.Logf("runtime log:\n%s", r.log.String())
		}
	})
	return r
}

// stop closes the engine (ending the feed as a clean shutdown does) and the store.
func (r *runtime) stop(tb testing.TB) {
	tb.Helper()
	if r.stopped {
		return
	}
	r.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := r.eng.Close(ctx); err != nil {
		tb.Errorf("close engine: %v", err)
	}
	if err := r.db.Close(); err != nil {
		tb.Errorf("close duckdb: %v", err)
	}
	r.mem.AssertSize(tb, 0)
}

// wait waits until every dataset reflects at least pos.
func (r *runtime) wait(tb testing.TB, pos position.LSN) {
	tb.Helper()
	waitFor(tb, fmt.Sprintf("datasets to reach %s", pos), func() bool {
		for _, ds := range r.feed.Datasets() {
			wm, err := r.eng.Watermark(ds)
			if err != nil {
				tb.Fatal(err)
			}
			if wm < pos {
				return false
			}
		}
		return true
	})
}

// rows runs sql in the engine and renders each row as its values joined by "|".
func (r *runtime) rows(tb testing.TB, sql string) []string {
	tb.Helper()
	res, err := r.eng.Query(context.Background(), engine.Query{SQL: sql, NoCache: true})
	if err != nil {
		tb.Fatalf("engine query %q: %v", sql, err)
	}
	defer res.Release()
	var out []string
	for _, rec := range res.Records {
		for i := range int(rec.NumRows()) {
			vals := make([]string, rec.NumCols())
			for j, col := range rec.Columns() {
				if col.IsNull(i) {
					vals[j] = "NULL"
				} else {
					vals[j] = strings.Clone(col.ValueStr(i))
				}
			}
			out = append(out, strings.Join(vals, "|"))
		}
	}
	return out
}

// pgRows runs sql in Postgres and renders rows as rows does.
func pgRows(tb testing.TB, dsn, sql string) []string {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, sql)
	if err != nil {
		tb.Fatalf("postgres query %q: %v", sql, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			tb.Fatal(err)
		}
		strs := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				strs[i] = "NULL"
			} else {
				strs[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(strs, "|"))
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("postgres query %q: %v", sql, err)
	}
	return out
}

// mustEqual compares the rows the engine and Postgres return, naming the first
// difference.
func mustEqual(tb testing.TB, what string, got, want []string) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Errorf("%s: engine has %d rows, postgres %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			tb.Fatalf("%s: row %d: engine %q, postgres %q", what, i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		tb.FailNow()
	}
}

// mustMatchRecipe compares both tables row for row, the sum of count per product,
// and the rankings view with the same SQL in Postgres.
func mustMatchRecipe(tb testing.TB, r *runtime, dsn string) {
	tb.Helper()
	// Output columns are aliased so that ORDER BY means the source column in
	// both dialects (Postgres would sort by the text otherwise).
	const orders = `SELECT id::text AS a, product_id::text AS b, count::text AS c, coalesce(price::text, 'NULL') AS d FROM orders ORDER BY id`
	mustEqual(tb, "orders", r.rows(tb, orders), pgRows(tb, dsn, orders))
	mustEqual(tb, "orders.created_at", r.rows(tb, `SELECT epoch_us(created_at)::text AS a FROM orders ORDER BY id`),
		pgRows(tb, dsn, `SELECT (extract(epoch from created_at) * 1000000)::bigint::text AS a FROM orders ORDER BY id`))
	const products = `SELECT id::text AS a, name FROM products ORDER BY id`
	mustEqual(tb, "products", r.rows(tb, products), pgRows(tb, dsn, products))
	const sums = `SELECT product_id::text AS a, sum(count)::text AS b FROM orders GROUP BY product_id ORDER BY product_id`
	mustEqual(tb, "sum(count) per product", r.rows(tb, sums), pgRows(tb, dsn, sums))
	mustEqualRankings(tb, r.rows(tb, `SELECT name, count::text FROM rankings`), pgRows(tb, dsn, `SELECT name, count::text FROM (`+rankingsSQL+`) v`))
}

// mustEqualRankings compares top-5 results, which may order ties differently: the
// counts must be equal in order, and the names equal for every count that is not
// tied at the cut.
func mustEqualRankings(tb testing.TB, got, want []string) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("rankings: engine %q, postgres %q", got, want)
	}
	count := func(s string) string { _, c, _ := strings.Cut(s, "|"); return c }
	for i := range got {
		if count(got[i]) != count(want[i]) {
			tb.Fatalf("rankings: engine %q, postgres %q", got, want)
		}
	}
	last := count(want[len(want)-1])
	var g, w []string
	for i := range got {
		if count(got[i]) != last {
			g, w = append(g, got[i]), append(w, want[i])
		}
	}
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		tb.Fatalf("rankings: engine %q, postgres %q", got, want)
	}
}

// mustConnect opens a connection closed when the test ends.
func mustConnect(tb testing.TB, dsn string) *pgx.Conn {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// pgConnect connects once, failing fast.
func pgConnect(dsn string) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return pgx.Connect(ctx, dsn)
}

// mustExec runs statements, in order, on the database at dsn.
func mustExec(tb testing.TB, dsn string, stmts ...string) {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			tb.Fatalf("exec %q: %v", s, err)
		}
	}
}

// currentLSN reads pg_current_wal_lsn().
func currentLSN(tb testing.TB, dsn string) position.LSN {
	tb.Helper()
	return position.LSN(mustParse(tb, pgRows(tb, dsn, `SELECT pg_current_wal_lsn()::text`)[0]))
}

func mustParse(tb testing.TB, s string) position.LSN {
	tb.Helper()
	lsn, err := position.Parse(s)
	if err != nil {
		tb.Fatal(err)
	}
	return lsn
}

// slotRow describes a replication slot as Postgres sees it.
type slotRow struct {
	exists    bool
	active    bool
	pid       string
	confirmed position.LSN
}

func slotOf(tb testing.TB, dsn, slot string) slotRow {
	tb.Helper()
	rows := pgRows(tb, dsn, `SELECT active::text, coalesce(active_pid::text, ''), coalesce(confirmed_flush_lsn::text, '0/0')
		FROM pg_replication_slots WHERE slot_name = '`+slot+`'`)
	if len(rows) == 0 {
		return slotRow{}
	}
	f := strings.Split(rows[0], "|")
	return slotRow{exists: true, active: f[0] == "true", pid: f[1], confirmed: mustParse(tb, f[2])}
}

// waitFor polls cond until it holds, failing the test after waitTimeout.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// resnapshots returns cdc_resnapshots_total by reason.
func resnapshots(tb testing.TB, reg *prometheus.Registry) map[string]float64 {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "cdc_resnapshots_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					out[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// gauge returns the value of a gauge with the given label, or -1.
func gauge(tb testing.TB, reg *prometheus.Registry, name, label, value string) float64 {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

// syncBuffer is a log sink that tests can read while the runtime writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
