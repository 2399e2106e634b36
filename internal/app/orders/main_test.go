package orders_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/pgtest"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// pg is the Postgres the package's tests share, started by the first that needs it.
var pg pgtest.Shared

func TestMain(m *testing.M) { pg.Main(m) }

// initSQL is the repository's init.sql, which the stack applies to Postgres.
func initSQL(tb testing.TB) string {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "..", "init.sql"))
	if err != nil {
		tb.Fatalf("read init.sql: %v", err)
	}
	return string(b)
}

// MustPool returns a pool of size on a fresh database with init.sql applied.
func MustPool(tb testing.TB, size int32) *pgxpool.Pool {
	tb.Helper()
	ctx := context.Background()
	dsn := pg.NewDatabase(tb)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.PgConn().Exec(ctx, initSQL(tb)).ReadAll(); err != nil {
		tb.Fatalf("apply init.sql: %v", err)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.MaxConns = size
	cfg.AfterConnect = orders.AfterConnect
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// MustStore returns a Store over MustPool.
func MustStore(tb testing.TB, size int32) (*orders.Store, *pgxpool.Pool) {
	tb.Helper()
	pool := MustPool(tb, size)
	s := orders.NewStore(pool)
	s.AcquireTimeout = 10 * time.Second
	return s, pool
}

// MustExec runs SQL statements, failing tb on error.
func MustExec(tb testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	tb.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}

// MustLSN returns pg_current_wal_lsn().
func MustLSN(tb testing.TB, pool *pgxpool.Pool) position.LSN {
	tb.Helper()
	var text string
	if err := pool.QueryRow(context.Background(), "SELECT pg_current_wal_lsn()::text").Scan(&text); err != nil {
		tb.Fatal(err)
	}
	lsn, err := position.Parse(text)
	if err != nil {
		tb.Fatal(err)
	}
	return lsn
}

// MustCount returns the number of orders.
func MustCount(tb testing.TB, pool *pgxpool.Pool) int {
	tb.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM orders").Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}
