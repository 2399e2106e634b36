package chaos

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Collector reads the stack's State: Postgres directly, the accelerated
// runtime through its /v1/sql, the rankings through the api.
type Collector struct {
	Client      *Client
	PostgresURL string
}

// Products reads the product ids and names from Postgres.
func (c *Collector) Products(ctx context.Context) (map[int64]string, error) {
	conn, err := pgx.Connect(ctx, c.PostgresURL)
	if err != nil {
		return nil, fmt.Errorf("connect to Postgres: %w", err)
	}
	defer conn.Close(ctx)
	return products(ctx, conn)
}

func products(ctx context.Context, conn *pgx.Conn) (map[int64]string, error) {
	rows, err := conn.Query(ctx, `SELECT id, name FROM products`)
	if err != nil {
		return nil, fmt.Errorf("read products: %w", err)
	}
	out := map[int64]string{}
	var id int64
	var name string
	_, err = pgx.ForEachRow(rows, []any{&id, &name}, func() error { out[id] = name; return nil })
	if err != nil {
		return nil, fmt.Errorf("read products: %w", err)
	}
	return out, nil
}

// Collect reads the State. fromID is the smallest acknowledged order id: ids
// from there on are read one by one; below it only duplicates are.
func (c *Collector) Collect(ctx context.Context, fromID int64) (State, error) {
	s := State{Rankings: map[string][]RankRow{}}
	if err := c.postgres(ctx, fromID, &s); err != nil {
		return s, err
	}
	if err := c.accelerated(ctx, fromID, &s); err != nil {
		return s, err
	}
	for _, ep := range RankingEndpoints {
		rows, rd := c.Client.Ranking(ctx, "checker", ep, 0, true)
		if rd.OK() {
			s.Rankings[ep] = rows
		}
	}
	return s, nil
}

func (c *Collector) postgres(ctx context.Context, fromID int64, s *State) error {
	conn, err := pgx.Connect(ctx, c.PostgresURL)
	if err != nil {
		return fmt.Errorf("connect to Postgres: %w", err)
	}
	defer conn.Close(ctx)
	if s.Products, err = products(ctx, conn); err != nil {
		return err
	}
	s.PostgresIDs = map[int64]int{}
	var id, n, sum int64
	rows, _ := conn.Query(ctx, `SELECT id, COUNT(*) FROM orders WHERE id >= $1 GROUP BY id
		UNION ALL SELECT id, COUNT(*) FROM orders WHERE id < $1 GROUP BY id HAVING COUNT(*) > 1`, fromID)
	if _, err := pgx.ForEachRow(rows, []any{&id, &n}, func() error { s.PostgresIDs[id] = int(n); return nil }); err != nil {
		return fmt.Errorf("read order ids from Postgres: %w", err)
	}
	s.Postgres = map[int64]Tally{}
	rows, _ = conn.Query(ctx, `SELECT product_id, COUNT(*), COALESCE(SUM(count), 0) FROM orders GROUP BY product_id`)
	if _, err := pgx.ForEachRow(rows, []any{&id, &n, &sum}, func() error { s.Postgres[id] = Tally{n, sum}; return nil }); err != nil {
		return fmt.Errorf("read tallies from Postgres: %w", err)
	}
	return nil
}

func (c *Collector) accelerated(ctx context.Context, fromID int64, s *State) error {
	base, key := c.Client.AcceleratedURL, c.Client.AcceleratedKey
	rows, err := c.Client.SQL(ctx, base, key, fmt.Sprintf(`SELECT id, COUNT(*) AS n FROM orders WHERE id >= %d GROUP BY id
		UNION ALL SELECT id, COUNT(*) AS n FROM orders WHERE id < %d GROUP BY id HAVING COUNT(*) > 1`, fromID, fromID))
	if err != nil {
		return fmt.Errorf("read order ids from the accelerated runtime: %w", err)
	}
	s.AcceleratedIDs = map[int64]int{}
	for _, r := range rows {
		s.AcceleratedIDs[toInt(r["id"])] = int(toInt(r["n"]))
	}
	rows, err = c.Client.SQL(ctx, base, key, `SELECT product_id, COUNT(*) AS n, COALESCE(SUM(count), 0) AS s FROM orders GROUP BY product_id`)
	if err != nil {
		return fmt.Errorf("read tallies from the accelerated runtime: %w", err)
	}
	s.Accelerated = map[int64]Tally{}
	for _, r := range rows {
		s.Accelerated[toInt(r["product_id"])] = Tally{toInt(r["n"]), toInt(r["s"])}
	}
	return nil
}
