package bench_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/pgtest"
)

var (
	pgOnce sync.Once
	pg     *pgtest.Postgres
	pgStop func()
	pgErr  error
)

// TestMain stops the Postgres that the seeding tests started, if any.
func TestMain(m *testing.M) {
	code := m.Run()
	if pgStop != nil {
		pgStop()
	}
	os.Exit(code)
}

// MustSchema returns the DSN of a fresh database with the recipe's schema
// (init.sql), in a Postgres shared by the package's tests and started on first use.
func MustSchema(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs a Postgres container")
	}
	pgOnce.Do(func() { pg, pgStop, pgErr = pgtest.StartMain() })
	if pgErr != nil {
		tb.Fatal(pgErr)
	}
	dsn := pg.NewDatabase(tb)
	sql, err := os.ReadFile("../../init.sql")
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, string(sql)); err != nil {
		tb.Fatalf("load init.sql: %v", err)
	}
	return dsn
}

func TestSeeder(t *testing.T) {
	dsn := MustSchema(t)
	ctx := context.Background()
	db, err := bench.OpenPostgres(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })

	var progress strings.Builder
	db.SeedChunk, db.Out = 1000, &progress
	added, err := db.SeedTo(ctx, 2500)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := added, int64(2497); got != want { // init.sql holds 3 orders
		t.Fatalf("added=%d, want %d", got, want)
	}
	if got, want := strings.Count(progress.String(), "seed: "), 3; got != want {
		t.Fatalf("progress lines=%d, want %d:\n%s", got, want, progress.String())
	}
	n, err := db.Count(ctx)
	if err != nil || n != 2500 {
		t.Fatalf("count=%d, %v; want 2500", n, err)
	}
	bad, err := db.Int(ctx, "SELECT count(*) FROM orders o LEFT JOIN products p ON p.id = o.product_id WHERE o.id > 3 AND (p.id IS NULL OR o.count NOT BETWEEN 1 AND 10)")
	if err != nil || bad != 0 {
		t.Fatalf("orders of unknown products or counts out of range: %d, %v", bad, err)
	}
	products, err := db.Int(ctx, "SELECT count(DISTINCT product_id) FROM orders")
	if err != nil || products != 3 {
		t.Fatalf("products ordered=%d, %v; want all 3", products, err)
	}
	if added, err := db.SeedTo(ctx, 1000); err != nil || added != 0 {
		t.Fatalf("seeding below the count added %d, %v; want 0", added, err)
	}
}

// TestBacklog writes a backlog of one-row transactions: every row its own
// commit, so the WAL holds one commit record per order.
func TestBacklog(t *testing.T) {
	ctx := context.Background()
	dsn := MustSchema(t)
	pg, err := bench.OpenPostgres(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(ctx)
	had, err := pg.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := xid(t, dsn)
	if err := pg.Backlog(ctx, 50); err != nil {
		t.Fatal(err)
	}
	n, err := pg.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n-had, int64(50); got != want {
		t.Fatalf("orders=%d, want %d", got, want)
	}
	if got := xid(t, dsn) - before; got < 50 {
		t.Fatalf("%d transactions for 50 orders, want one each", got)
	}
}

// xid is the next transaction id of the database at dsn.
func xid(tb testing.TB, dsn string) int64 {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int64
	if err := conn.QueryRow(context.Background(), "SELECT txid_current()").Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}
func TestSeeder_NoProducts(t *testing.T) {
	dsn := MustSchema(t)
	ctx := context.Background()
	db, err := bench.OpenPostgres(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close(ctx) })
	if err := db.Exec(ctx, "TRUNCATE orders, products"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SeedTo(ctx, 10); err == nil || !strings.Contains(err.Error(), "init.sql") {
		t.Fatalf("err=%v, want advice to load init.sql", err)
	}
}
