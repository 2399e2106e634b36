//go:build duckdb_arrow

package cdc_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// Seed sizes: enough orders that the snapshot copy overlaps the writers.
const (
	seedProducts = 20
	seedOrders   = 100_000
)

// seedRecipe creates the recipe's tables and fills them. Every product gets
// seed orders that the writers never delete, so no product drops out of the
// rankings (Postgres and DuckDB order NULL counts differently).
func seedRecipe(tb testing.TB, dsn string) {
	tb.Helper()
	mustExec(tb, dsn, recipeSchema...)
	mustExec(tb, dsn,
		`INSERT INTO products SELECT i, 'product ' || i FROM generate_series(1, 20) i`,
		`INSERT INTO orders (product_id, count, price)
			SELECT 1 + i % 20, 1 + i % 7, CASE WHEN i % 3 = 0 THEN NULL ELSE (i % 1000) / 10.0 END
			FROM generate_series(1, 100000) i`)
}

// writers change the recipe's tables from several connections at once: inserts,
// updates, deletes, primary-key changes and multi-table transactions.
type writers struct {
	pool   *pgxpool.Pool
	cancel context.CancelFunc
	wg     sync.WaitGroup
	maxID  atomic.Int64
	ops    atomic.Int64
	mu     sync.Mutex
	err    error
}

func startWriters(tb testing.TB, dsn string, n int) *writers {
	tb.Helper()
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &writers{pool: pool, cancel: cancel}
	w.maxID.Store(seedOrders)
	for range n {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for ctx.Err() == nil {
				if err := w.one(ctx); err != nil && ctx.Err() == nil {
					w.mu.Lock()
					w.err = errors.Join(w.err, err)
					w.mu.Unlock()
					return
				}
				w.ops.Add(1)
			}
		}()
	}
	tb.Cleanup(func() { w.cancel(); w.wg.Wait(); pool.Close() })
	return w
}

// one makes one random change.
func (w *writers) one(ctx context.Context) error {
	id := func() int64 { return 1 + rand.Int64N(w.maxID.Load()) }
	fresh := func() int64 { return seedOrders + 1 + rand.Int64N(max(w.maxID.Load()-seedOrders, 1)) }
	product := 1 + rand.IntN(seedProducts)
	switch p := rand.IntN(100); {
	case p < 45:
		var newID int64
		err := w.pool.QueryRow(ctx, `INSERT INTO orders (product_id, count, price) VALUES ($1, $2, $3) RETURNING id`,
			product, 1+rand.IntN(10), float64(rand.IntN(10000))/100).Scan(&newID)
		if err == nil {
			for cur := w.maxID.Load(); newID > cur && !w.maxID.CompareAndSwap(cur, newID); cur = w.maxID.Load() {
			}
		}
		return ignoreCancel(err)
	case p < 70:
		_, err := w.pool.Exec(ctx, `UPDATE orders SET count = count + 1, price = NULL WHERE id = $1`, id())
		return ignoreCancel(err)
	case p < 85:
		_, err := w.pool.Exec(ctx, `DELETE FROM orders WHERE id = $1`, fresh())
		return ignoreCancel(err)
	case p < 92:
		// A primary-key change of a writers' order.
		_, err := w.pool.Exec(ctx, `UPDATE orders SET id = nextval('orders_id_seq'), count = count + 2 WHERE id = $1`, fresh())
		return ignoreCancel(err)
	default:
		// One transaction over both tables, changing the same row twice, and an
		// insert that a later statement deletes.
		return ignoreCancel(pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
			var a int64
			if err := tx.QueryRow(ctx, `INSERT INTO orders (product_id, count) VALUES ($1, 3) RETURNING id`, product).Scan(&a); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE orders SET count = count * 2 WHERE id = $1`, a); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO orders (product_id, count) VALUES ($1, 100) RETURNING id`, product); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM orders WHERE id = currval('orders_id_seq')`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `UPDATE products SET name = 'product ' || id || ' v' || $2::int WHERE id = $1`, product, rand.IntN(1000))
			return err
		}))
	}
}

func ignoreCancel(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// stop stops the writers and returns the source position after their last write.
func (w *writers) stop(tb testing.TB, dsn string) position.LSN {
	tb.Helper()
	w.cancel()
	w.wg.Wait()
	if w.err != nil {
		tb.Fatalf("writers: %v", w.err)
	}
	return currentLSN(tb, dsn)
}

// waitOps waits until the writers made n more changes.
func (w *writers) waitOps(tb testing.TB, n int64) {
	tb.Helper()
	target := w.ops.Load() + n
	waitFor(tb, "writes", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.err != nil {
			tb.Fatalf("writers: %v", w.err)
		}
		return w.ops.Load() >= target
	})
}
