package orders_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/app/ranking"
)

func TestStore_Create(t *testing.T) {
	s, pool := MustStore(t, 2)
	ctx := context.Background()
	rowsBefore := MustCount(t, pool)
	before := MustLSN(t, pool)

	o, token, err := s.Create(ctx, orders.NewOrder{ProductID: 2, Count: 17})
	if err != nil {
		t.Fatal(err)
	}
	after := MustLSN(t, pool)
	if !(before < token && token <= after) {
		t.Fatalf("token=%s, want in (%s, %s]", token, before, after)
	}
	if got, want := MustCount(t, pool), rowsBefore+1; got != want {
		t.Fatalf("orders=%d, want %d", got, want)
	}
	if o.ID == 0 || o.ProductID != 2 || o.Count != 17 || o.CreatedAt.IsZero() || o.CreatedAt.Location() != time.UTC {
		t.Fatalf("order=%+v", o)
	}
	var productID, count int64
	if err := pool.QueryRow(ctx, "SELECT product_id, count FROM orders WHERE id = $1", o.ID).Scan(&productID, &count); err != nil {
		t.Fatal(err)
	}
	if productID != 2 || count != 17 {
		t.Fatalf("stored product_id=%d count=%d, want 2 and 17", productID, count)
	}
}

func TestStore_CreateRandom(t *testing.T) {
	s, pool := MustStore(t, 2)
	before := MustLSN(t, pool)
	rowsBefore := MustCount(t, pool)
	seen := map[int64]bool{}
	for range 30 {
		o, token, err := s.CreateRandom(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if o.Count < 1 || o.Count > orders.RandomMaxCount {
			t.Fatalf("count=%d, want 1..%d", o.Count, orders.RandomMaxCount)
		}
		if token <= before {
			t.Fatalf("token=%s, want > %s", token, before)
		}
		before = token
		seen[o.ProductID] = true
	}
	if got, want := MustCount(t, pool), rowsBefore+30; got != want {
		t.Fatalf("orders=%d, want %d", got, want)
	}
	if len(seen) < 2 {
		t.Fatalf("30 random orders all named product %v", seen)
	}
}

func TestStore_CreateRandom_NoProducts(t *testing.T) {
	s, pool := MustStore(t, 2)
	MustExec(t, pool, "TRUNCATE orders, products")
	_, _, err := s.CreateRandom(context.Background())
	if !errors.Is(err, orders.ErrNoProducts) {
		t.Fatalf("err=%v, want ErrNoProducts", err)
	}
	if want := "apply init.sql"; !strings.Contains(err.Error(), want) {
		t.Fatalf("err=%q, want it to contain %q", err, want)
	}
}

func TestStore_Create_UnknownProduct(t *testing.T) {
	s, pool := MustStore(t, 2)
	rowsBefore := MustCount(t, pool)
	_, _, err := s.Create(context.Background(), orders.NewOrder{ProductID: 42, Count: 1})
	if !errors.Is(err, orders.ErrUnknownProduct) {
		t.Fatalf("err=%v, want ErrUnknownProduct", err)
	}
	if want := "product 42 does not exist"; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err=%q, want prefix %q", err, want)
	}
	if got := MustCount(t, pool); got != rowsBefore {
		t.Fatalf("orders=%d, want %d: a rejected order was written", got, rowsBefore)
	}
}

func TestStore_Create_Invalid(t *testing.T) {
	s, pool := MustStore(t, 2)
	rowsBefore := MustCount(t, pool)
	for _, o := range []orders.NewOrder{{ProductID: 1, Count: 0}, {ProductID: 1, Count: orders.MaxCount + 1}} {
		if _, _, err := s.Create(context.Background(), o); !errors.Is(err, orders.ErrInvalid) {
			t.Fatalf("Create(%+v) err=%v, want ErrInvalid", o, err)
		}
	}
	if got := MustCount(t, pool); got != rowsBefore {
		t.Fatalf("orders=%d, want %d", got, rowsBefore)
	}
}

func TestStore_Create_Concurrent(t *testing.T) {
	const n = 64
	s, pool := MustStore(t, 4) // 64 writers share 4 connections
	rowsBefore := MustCount(t, pool)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if _, _, err := s.Create(context.Background(), orders.NewOrder{ProductID: int64(i%3 + 1), Count: 1}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got, want := MustCount(t, pool), rowsBefore+n; got != want {
		t.Fatalf("orders=%d, want %d", got, want)
	}
}

func TestStore_Ranking(t *testing.T) {
	s, pool := MustStore(t, 2)
	ctx := context.Background()
	// Replace the recipe's data with a case that exercises the ordering: a tie
	// (broken by name in byte order, where "B" < "a" and spaces count), products
	// that never sold (last), and more products than the limit.
	MustExec(t, pool, "TRUNCATE orders, products RESTART IDENTITY")
	MustExec(t, pool, `INSERT INTO products (name) VALUES
		('apple'), ('Banana'), ('a pear'), ('cherry'), ('date'), ('fig'), ('grape')`)
	MustExec(t, pool, `INSERT INTO orders (product_id, count) VALUES
		(1, 10), (1, 5),   -- apple   15
		(2, 15),           -- Banana  15
		(3, 7), (3, 8),    -- a pear  15
		(4, 40),           -- cherry  40
		(5, 1)             -- date     1; fig and grape never sold`)

	res, err := s.Ranking(ctx, ranking.Request{})
	if err != nil {
		t.Fatal(err)
	}
	want := []ranking.Row{
		{Name: "cherry", Count: 40},
		{Name: "Banana", Count: 15},
		{Name: "a pear", Count: 15},
		{Name: "apple", Count: 15},
		{Name: "date", Count: 1},
	}
	if !equalRows(res.Rows, want) {
		t.Fatalf("rows=%v, want %v", res.Rows, want)
	}

	// Only products that never sold: all listed with 0, by name.
	MustExec(t, pool, "TRUNCATE orders")
	res, err = s.Ranking(ctx, ranking.Request{})
	if err != nil {
		t.Fatal(err)
	}
	want = []ranking.Row{{Name: "Banana"}, {Name: "a pear"}, {Name: "apple"}, {Name: "cherry"}, {Name: "date"}}
	if !equalRows(res.Rows, want) {
		t.Fatalf("rows=%v, want %v", res.Rows, want)
	}
}

func TestStore_Ranking_Position(t *testing.T) {
	s, pool := MustStore(t, 2)
	ctx := context.Background()
	_, token, err := s.Create(ctx, orders.NewOrder{ProductID: 3, Count: 1000})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Ranking(ctx, ranking.Request{MinPosition: token})
	if err != nil {
		t.Fatal(err)
	}
	after := MustLSN(t, pool)
	if !(token <= res.Position && res.Position <= after) {
		t.Fatalf("position=%s, want in [%s, %s]", res.Position, token, after)
	}
	if got, want := res.Rows[0], (ranking.Row{Name: "nintendo", Count: 1030}); got != want {
		t.Fatalf("first row=%v, want %v: the write is not visible at its own token", got, want)
	}

	_, err = s.Ranking(ctx, ranking.Request{MinPosition: after + 1<<40})
	if !errors.Is(err, orders.ErrInvalid) {
		t.Fatalf("err=%v, want ErrInvalid for a position Postgres never reached", err)
	}
}

func TestStore_PoolBusy(t *testing.T) {
	s, pool := MustStore(t, 1)
	s.AcquireTimeout = 50 * time.Millisecond
	s.PoolSetting = "SOME_POOL_SIZE"
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for name, call := range map[string]func() error{
		"Create":  func() error { _, _, err := s.Create(ctx, orders.NewOrder{ProductID: 1, Count: 1}); return err },
		"Ranking": func() error { _, err := s.Ranking(ctx, ranking.Request{}); return err },
		"Ping":    func() error { return s.Ping(ctx) },
	} {
		err := call()
		if !errors.Is(err, orders.ErrUnavailable) {
			t.Fatalf("%s: err=%v, want ErrUnavailable", name, err)
		}
		if want := "no pooled connection came free within 50ms; retry shortly, or raise SOME_POOL_SIZE (now 1)"; !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: err=%q, want it to contain %q", name, err, want)
		}
	}
}

func TestStore_Unreachable(t *testing.T) {
	s, pool := MustStore(t, 1)
	pool.Close()
	_, err := s.Ranking(context.Background(), ranking.Request{})
	if !errors.Is(err, orders.ErrUnavailable) {
		t.Fatalf("err=%v, want ErrUnavailable", err)
	}
	if want := "postgres at " + s.Addr() + " is unavailable"; !strings.Contains(err.Error(), want) {
		t.Fatalf("err=%q, want it to contain %q", err, want)
	}
}

func TestStore_CallerCancels(t *testing.T) {
	s, _ := MustStore(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Ranking(ctx, ranking.Request{})
	if !errors.Is(err, context.Canceled) || errors.Is(err, orders.ErrUnavailable) {
		t.Fatalf("err=%v, want only context.Canceled", err)
	}
}

func equalRows(a, b []ranking.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAfterConnect_SynchronousCommit(t *testing.T) {
	ctx := context.Background()
	for setting, want := range map[string]string{"off": "local", "on": "on", "remote_apply": "remote_apply"} {
		dsn := pg.NewDatabase(t)
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+conn.Config().Database+" SET synchronous_commit = "+setting); err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)

		conn, err = pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		if err := orders.AfterConnect(ctx, conn); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := conn.QueryRow(ctx, "SHOW synchronous_commit").Scan(&got); err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
		if got != want {
			t.Errorf("database synchronous_commit=%s: session has %s, want %s", setting, got, want)
		}
	}
}
