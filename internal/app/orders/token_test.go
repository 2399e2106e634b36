package orders_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// commitEnd returns the end of the commit record of the transaction that wrote
// order id, read from the WAL itself with pg_walinspect (no replication
// involved): the position a runtime's watermark reaches once it has applied that
// transaction.
func commitEnd(tb testing.TB, pool *pgxpool.Pool, since position.LSN, id int64) position.LSN {
	tb.Helper()
	ctx := context.Background()
	var text string
	err := pool.QueryRow(ctx, `SELECT w.end_lsn::text
FROM orders o, pg_get_wal_records_info_till_end_of_wal($1::text::pg_lsn) w
WHERE o.id = $2 AND w.resource_manager = 'Transaction' AND w.record_type LIKE 'COMMIT%'
  AND w.xid::text = o.xmin::text`, since.String(), id).Scan(&text)
	if err != nil {
		tb.Fatalf("commit record of order %d: %v", id, err)
	}
	lsn, err := position.Parse(text)
	if err != nil {
		tb.Fatal(err)
	}
	return lsn
}

// TestStore_Create_TokenCoversCommit: the token of every write, concurrent
// ones included, is at or past the end of its own commit record, so a reader
// that waits for a watermark at the token sees the row. A token read in the
// insert's own transaction, or the insert's WAL position, would fall short.
func TestStore_Create_TokenCoversCommit(t *testing.T) {
	const n = 48
	s, pool := MustStore(t, 4) // 48 writers share 4 connections
	MustExec(t, pool, "CREATE EXTENSION IF NOT EXISTS pg_walinspect")
	before := MustLSN(t, pool)

	type write struct {
		id    int64
		token position.LSN
	}
	writes := make([]write, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var o orders.Order
			var err error
			if i%2 == 0 {
				o, writes[i].token, err = s.Create(context.Background(), orders.NewOrder{ProductID: int64(i%3 + 1), Count: 1})
			} else {
				o, writes[i].token, err = s.CreateRandom(context.Background())
			}
			writes[i].id, errs[i] = o.ID, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	after := MustLSN(t, pool)
	for _, w := range writes {
		end := commitEnd(t, pool, before, w.id)
		if !(end <= w.token && w.token <= after) {
			t.Errorf("order %d: token=%s, want in [%s (end of its commit record), %s]", w.id, w.token, end, after)
		}
	}
}

// TestStore_Create_ConnectionSurvivesFailures: after a write that Postgres
// refuses, or one that finds no product, the same connection writes again and
// hands out a valid token (the pipeline is left in a clean state).
func TestStore_Create_ConnectionSurvivesFailures(t *testing.T) {
	s, pool := MustStore(t, 1)
	ctx := context.Background()
	pid := func() uint32 {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		return conn.Conn().PgConn().PID()
	}
	first := pid()
	check := func(step string) {
		t.Helper()
		before := MustLSN(t, pool)
		o, token, err := s.Create(ctx, orders.NewOrder{ProductID: 1, Count: 2})
		if err != nil {
			t.Fatalf("after %s: %v", step, err)
		}
		if o.ID == 0 || o.ProductID != 1 || o.Count != 2 || token <= before {
			t.Fatalf("after %s: order=%+v token=%s (before %s)", step, o, token, before)
		}
	}

	if _, _, err := s.Create(ctx, orders.NewOrder{ProductID: 42, Count: 1}); !errors.Is(err, orders.ErrUnknownProduct) {
		t.Fatalf("err=%v, want ErrUnknownProduct", err)
	}
	check("an unknown product")

	MustExec(t, pool, "ALTER TABLE orders ADD CONSTRAINT small CHECK (count < 5) NOT VALID")
	if _, _, err := s.Create(ctx, orders.NewOrder{ProductID: 1, Count: 9}); !errors.Is(err, orders.ErrInvalid) {
		t.Fatalf("err=%v, want ErrInvalid from the check constraint", err)
	}
	check("a check violation")

	MustExec(t, pool, "ALTER TABLE orders DROP CONSTRAINT small")
	MustExec(t, pool, "CREATE TABLE products_kept AS SELECT * FROM products")
	MustExec(t, pool, "TRUNCATE orders, products")
	if _, _, err := s.CreateRandom(ctx); !errors.Is(err, orders.ErrNoProducts) {
		t.Fatalf("err=%v, want ErrNoProducts", err)
	}
	MustExec(t, pool, "INSERT INTO products SELECT * FROM products_kept")
	check("a random order without products")
	if _, _, err := s.CreateRandom(ctx); err != nil {
		t.Fatal(err)
	}

	if got := pid(); got != first {
		t.Fatalf("backend pid %d, want %d: a failure cost the connection", got, first)
	}
}
