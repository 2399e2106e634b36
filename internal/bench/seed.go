package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultSeedChunk is how many orders one seeding statement inserts: small enough
// that each transaction streams to the runtimes in well under a second, large
// enough that a million orders take a few dozen statements.
const DefaultSeedChunk = 100_000

// Postgres is the benchmark's connection to the stack's Postgres: it counts
// orders, seeds them and writes backlogs.
type Postgres struct {
	// SeedChunk is orders per seeding statement; DefaultSeedChunk when zero.
	SeedChunk int
	// Out receives seeding progress; nothing is printed when nil.
	Out io.Writer

	conn *pgx.Conn
}

// OpenPostgres connects to url.
func OpenPostgres(ctx context.Context, url string) (*Postgres, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w (check --postgres-url; a URL without a password takes $PGPASSWORD)", err)
	}
	return &Postgres{conn: conn}, nil
}

// Exec runs sql.
func (p *Postgres) Exec(ctx context.Context, sql string) error {
	_, err := p.conn.Exec(ctx, sql)
	return err
}

// Int runs sql, which must answer one integer.
func (p *Postgres) Int(ctx context.Context, sql string) (int64, error) {
	var n int64
	err := p.conn.QueryRow(ctx, sql).Scan(&n)
	return n, err
}

// Close closes the connection.
func (p *Postgres) Close(ctx context.Context) error { return p.conn.Close(ctx) }

// Count returns the number of orders.
func (p *Postgres) Count(ctx context.Context) (int64, error) {
	n, err := p.Int(ctx, "SELECT count(*) FROM orders")
	if err != nil {
		return 0, fmt.Errorf("count orders: %w", err)
	}
	return n, nil
}

// SeedTo inserts orders until the table holds at least total, fast: one
// INSERT ... SELECT over generate_series per chunk, each a transaction of its
// own, with random products and counts as POST /orders makes them. It
// returns how many it added; none when the table already holds as many.
func (p *Postgres) SeedTo(ctx context.Context, total int64) (int64, error) {
	have, err := p.Count(ctx)
	if err != nil || have >= total {
		return 0, err
	}
	if products, err := p.Int(ctx, "SELECT count(*) FROM products"); err != nil || products == 0 {
		return 0, fmt.Errorf("seed orders: %w", cmp.Or(err, errors.New("the products table is empty; load init.sql into the database first")))
	}
	start, want, chunk := time.Now(), total-have, int64(cmp.Or(p.SeedChunk, DefaultSeedChunk))
	var added int64
	for added < want {
		n := min(chunk, want-added)
		if err := p.Exec(ctx, seedSQL(n)); err != nil {
			return added, fmt.Errorf("seed %d orders: %w", n, err)
		}
		added += n
		if p.Out != nil {
			fmt.Fprintf(p.Out, "seed: %d/%d orders added (%d%%), table at %d, %.1fs\n",
				added, want, added*100/want, have+added, time.Since(start).Seconds())
		}
	}
	return added, nil
}

// seedSQL inserts n orders of random products (those that exist) with counts 1-10.
func seedSQL(n int64) string {
	return fmt.Sprintf(`WITH p AS (SELECT array_agg(id ORDER BY id) AS ids FROM products)
INSERT INTO orders (product_id, count)
SELECT p.ids[1 + floor(random() * cardinality(p.ids))::int], 1 + floor(random() * 10)::int
FROM p, generate_series(1, %d)`, n)
}

// Backlog writes n orders as n transactions of one row each, from a DO block
// that commits per row inside Postgres, with synchronous_commit off so that
// the commits are not what the time is spent on: a backlog of many small
// transactions, as a busy command side leaves it for the runtimes.
func (p *Postgres) Backlog(ctx context.Context, n int) error {
	do := fmt.Sprintf(`DO $$
DECLARE ids int[] := ARRAY(SELECT id FROM products ORDER BY id);
BEGIN
  FOR i IN 1..%d LOOP
    INSERT INTO orders (product_id, count) VALUES (ids[1 + i %% cardinality(ids)], 1 + i %% 10);
    COMMIT;
  END LOOP;
END $$`, n)
	// One statement per simple query: a DO block may commit only outside a
	// transaction block, which several statements in one query would make.
	for _, sql := range []string{"SET synchronous_commit = off", do, "RESET synchronous_commit"} {
		if _, err := p.conn.PgConn().Exec(ctx, sql).ReadAll(); err != nil {
			return fmt.Errorf("write a backlog of %d orders: %w", n, err)
		}
	}
	return nil
}
