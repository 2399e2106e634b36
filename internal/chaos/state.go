package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// Collect reads the stack's State: Postgres directly, the accelerated
// runtime through its /v1/sql, the rankings through the api. fromID is the
// smallest acknowledged order id: ids from there on are read one by one;
// below it only duplicates are.
func (c *Client) Collect(ctx context.Context, fromID int64) (State, error) {
	s := State{Products: map[int64]string{}, PostgresIDs: map[int64]int{}, AcceleratedIDs: map[int64]int{},
		Postgres: map[int64]Tally{}, Accelerated: map[int64]Tally{}, Rankings: map[string][]RankRow{}}
	ids := fmt.Sprintf(`SELECT id, COUNT(*) AS n FROM orders WHERE id >= %d GROUP BY id
		UNION ALL SELECT id, COUNT(*) AS n FROM orders WHERE id < %d GROUP BY id HAVING COUNT(*) > 1`, fromID, fromID)
	const tallies = `SELECT product_id AS id, COUNT(*) AS n, COALESCE(SUM(count), 0) AS s FROM orders GROUP BY product_id`
	for _, q := range []struct {
		store, what, sql string
		into             func(map[string]any)
	}{
		{ServicePostgres, "products", `SELECT id, name FROM products`, func(r map[string]any) { s.Products[toInt(r["id"])] = fmt.Sprint(r["name"]) }},
		{ServicePostgres, "order ids", ids, func(r map[string]any) { s.PostgresIDs[toInt(r["id"])] = int(toInt(r["n"])) }},
		{ServicePostgres, "tallies", tallies, func(r map[string]any) { s.Postgres[toInt(r["id"])] = Tally{toInt(r["n"]), toInt(r["s"])} }},
		{ServiceAccelerated, "order ids", ids, func(r map[string]any) { s.AcceleratedIDs[toInt(r["id"])] = int(toInt(r["n"])) }},
		{ServiceAccelerated, "tallies", tallies, func(r map[string]any) { s.Accelerated[toInt(r["id"])] = Tally{toInt(r["n"]), toInt(r["s"])} }},
	} {
		rows, err := c.query(ctx, q.store, q.sql)
		if err != nil {
			return s, fmt.Errorf("read %s from %s: %w", q.what, q.store, err)
		}
		for _, r := range rows {
			q.into(r)
		}
	}
	for _, ep := range RankingEndpoints {
		if rows, rd := c.Ranking(ctx, "checker", ep, 0, true); rd.OK() {
			s.Rankings[ep] = rows
		}
	}
	return s, nil
}

// query runs sql in Postgres or on a runtime and returns its rows.
func (c *Client) query(ctx context.Context, store, sql string) ([]map[string]any, error) {
	if store != ServicePostgres {
		return c.SQL(ctx, store, sql)
	}
	conn, err := pgx.Connect(ctx, c.PostgresURL)
	if err != nil {
		return nil, fmt.Errorf("connect to Postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, _ := conn.Query(ctx, sql)
	return pgx.CollectRows(rows, pgx.RowToMap)
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i
		}
		f, _ := n.Float64()
		return int64(f)
	case int64:
		return n
	case int32:
		return int64(n)
	case string: // a HUGEINT, as DuckDB's SUM answers
		i, _ := strconv.ParseInt(n, 10, 64)
		return i
	}
	return 0
}
