//go:build duckdb_arrow

package cdc_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// The snapshot meets the stream exactly: writers change both tables from several
// connections before, during and after the snapshot; once they stop, every table,
// every product's sum of count and the rankings view equal Postgres.
func TestSnapshotAndStreamMeetExactly(t *testing.T) {
	dsn := pg.NewDatabase(t)
	seedRecipe(t, dsn)
	w := startWriters(t, dsn, 4)
	w.waitOps(t, 200)

	r := startRuntime(t, pod(dsn, "memory"), "", nil)
	waitFor(t, "the first snapshot", func() bool { wm, _ := r.eng.Watermark("orders"); return wm != 0 })
	w.waitOps(t, 2000) // streaming under load
	end := w.stop(t, dsn)

	r.wait(t, end)
	mustMatchRecipe(t, r, dsn)
	if got := resnapshots(t, r.reg); len(got) != 0 {
		t.Errorf("resnapshots=%v, want none", got)
	}
}

// A transaction over both tables is visible whole or not at all: every writer
// transaction adds one product and one order for it, and moves count between two
// orders, so in any state a reader may see, products and orders grow together and
// the total count never changes.
func TestTransactionsApplyWhole(t *testing.T) {
	dsn := pg.NewDatabase(t)
	mustExec(t, dsn, recipeSchema...)
	mustExec(t, dsn,
		`INSERT INTO products VALUES (1, 'a'), (2, 'b')`,
		`INSERT INTO orders (id, product_id, count) VALUES (1, 1, 500), (2, 2, 500)`)
	r := startRuntime(t, pod(dsn, "memory"), "", nil)
	r.wait(t, currentLSN(t, dsn))

	const check = `SELECT (SELECT count(*) FROM products)::text, (SELECT count(*) FROM orders)::text, (SELECT sum(count) FROM orders)::text`
	ctx, cancel := context.WithCancel(context.Background())
	var reads atomic.Int64
	var bad atomic.Value
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			res, err := r.eng.Query(ctx, engine.Query{SQL: check, NoCache: true})
			if err != nil {
				if ctx.Err() == nil {
					bad.Store(err.Error())
				}
				return
			}
			var p, o, s string
			p, o, s = res.Records[0].Column(0).ValueStr(0), res.Records[0].Column(1).ValueStr(0), res.Records[0].Column(2).ValueStr(0)
			if p != o || s != "1000" {
				bad.Store(fmt.Sprintf("products=%s orders=%s sum(count)=%s: half a transaction", p, o, s))
			}
			res.Release()
			reads.Add(1)
			time.Sleep(time.Millisecond) // leave the machine to the writer and the feed
		}
	}()
	conn := mustConnect(t, dsn)
	for i := 3; i < 200; i++ {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			for _, q := range []string{
				fmt.Sprintf(`INSERT INTO products VALUES (%d, 'p%d')`, i, i),
				fmt.Sprintf(`INSERT INTO orders (id, product_id, count) VALUES (%d, %d, 0)`, i, i),
				fmt.Sprintf(`UPDATE orders SET count = count - %d WHERE id = 1`, i%5),
				fmt.Sprintf(`UPDATE orders SET count = count + %d WHERE id = 2`, i%5),
			} {
				if _, err := tx.Exec(ctx, q); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	r.wait(t, currentLSN(t, dsn))
	// The read in flight now may have begun before the last write was applied;
	// the one after it began later.
	after := reads.Load() + 2
	waitFor(t, "a read begun after the last write", func() bool { return reads.Load() >= after })
	cancel()
	wg.Wait()
	if msg := bad.Load(); msg != nil {
		t.Fatal(msg)
	}
	mustMatchRecipe(t, r, dsn)
}

// Updates that change the primary key move the row; an update, a key change and a
// delete of one row within one transaction net out correctly.
func TestPrimaryKeyChange(t *testing.T) {
	dsn := pg.NewDatabase(t)
	mustExec(t, dsn, recipeSchema...)
	mustExec(t, dsn,
		`INSERT INTO products VALUES (1, 'a'), (2, 'b'), (3, 'c')`,
		`INSERT INTO orders (id, product_id, count) VALUES (1, 1, 1), (2, 2, 2), (3, 3, 3)`)
	r := startRuntime(t, pod(dsn, "memory"), "", nil)
	r.wait(t, currentLSN(t, dsn))

	mustExec(t, dsn,
		`UPDATE products SET id = 10 WHERE id = 1`,
		`UPDATE orders SET id = 20, product_id = 10 WHERE id = 1`,
		"BEGIN",
		`UPDATE orders SET id = 30 WHERE id = 2`,
		`UPDATE orders SET id = 31, count = 7 WHERE id = 30`,
		`INSERT INTO orders (id, product_id, count) VALUES (2, 2, 9)`, // the old key again
		`UPDATE orders SET id = 40 WHERE id = 3`,
		`DELETE FROM orders WHERE id = 40`,
		`UPDATE products SET id = 1 WHERE id = 2`,
		`UPDATE products SET id = 2 WHERE id = 3`,
		`INSERT INTO orders (id, product_id, count) VALUES (50, 1, 5)`, // every product has orders: NULL counts sort differently in the two dialects
		"COMMIT")
	r.wait(t, currentLSN(t, dsn))
	mustMatchRecipe(t, r, dsn)
	if got, want := r.rows(t, `SELECT id FROM orders ORDER BY id`), []string{"2", "20", "31", "50"}; !slices.Equal(got, want) {
		t.Fatalf("order ids=%v, want %v", got, want)
	}
}

// TRUNCATE empties the local tables within the transaction that truncates, and
// rows inserted after it in the same transaction survive.
func TestTruncate(t *testing.T) {
	dsn := pg.NewDatabase(t)
	seedRecipe(t, dsn)
	r := startRuntime(t, pod(dsn, "memory"), "", nil)
	r.wait(t, currentLSN(t, dsn))

	mustExec(t, dsn, "BEGIN",
		`UPDATE orders SET count = 99 WHERE id = 1`,
		`TRUNCATE orders, products`,
		`INSERT INTO products VALUES (1, 'only')`,
		`INSERT INTO orders (id, product_id, count) VALUES (1, 1, 3), (2, 1, 4)`,
		`DELETE FROM orders WHERE id = 2`,
		"COMMIT")
	r.wait(t, currentLSN(t, dsn))
	mustMatchRecipe(t, r, dsn)
}
