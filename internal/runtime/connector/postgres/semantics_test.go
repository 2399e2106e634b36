//go:build duckdb_arrow

package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

// recipeViewUnchanged is the cookbook recipe's view as its spicepod writes it:
// no NULLS LAST, no tie breaker.
const recipeViewUnchanged = `with a as (SELECT products.id, sum(count) as count FROM orders INNER JOIN products
    ON orders.product_id = products.id GROUP BY products.id)
    select name, count from products left join a on products.id = a.id
    order by count desc limit 5`

// TestRecipeViewAnswersAsPostgres: the recipe's view text, unchanged, over
// products with and without orders, answers in the runtime (Postgres tables
// accelerated in DuckDB) the same rows, in the same order, as in Postgres.
func TestRecipeViewAnswersAsPostgres(t *testing.T) {
	dsn := newDatabase(t)
	stmts := []string{
		"CREATE TABLE products (id int PRIMARY KEY, name text NOT NULL)",
		"CREATE TABLE orders (id bigserial PRIMARY KEY, product_id int NOT NULL, count int NOT NULL)",
	}
	for i := 1; i <= 7; i++ {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO products VALUES (%d, 'product %d')", i, i))
	}
	for i := 1; i <= 6; i++ { // product 7 has no orders (one, so that no tie leaves the order to chance)
		stmts = append(stmts, fmt.Sprintf("INSERT INTO orders (product_id, count) VALUES (%d, %d), (%d, 1)", i, i*10, i))
	}
	mustExec(t, dsn, stmts...)

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	pgRows, err := conn.Query(ctx, recipeViewUnchanged)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for pgRows.Next() {
		var name string
		var count *int64
		if err := pgRows.Scan(&name, &count); err != nil {
			t.Fatal(err)
		}
		c := "null"
		if count != nil {
			c = fmt.Sprint(*count)
		}
		want = append(want, name+"|"+c)
	}
	if err := pgRows.Err(); err != nil {
		t.Fatal(err)
	}

	pod := `version: v1
kind: Spicepod
name: sample
datasets:
  - {from: "postgres:public.products", name: products, acceleration: {enabled: true}}
  - {from: "postgres:public.orders", name: orders, acceleration: {enabled: true}}
views:
  - name: rankings
    sql: |
` + "      " + strings.ReplaceAll(recipeViewUnchanged, "\n", "\n      ") + "\n"
	e := runtimetest.NewEngine(t, pod, map[string]engine.Source{
		"products": mustSource(t, dsnParams(dsn), "public.products"),
		"orders":   mustSource(t, dsnParams(dsn), "public.orders"),
	}, nil)
	runtimetest.WaitReady(t, e)
	res, err := e.Query(ctx, engine.Query{SQL: "select * from rankings"})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	var got []string
	for _, rec := range res.Records {
		for i := 0; i < int(rec.NumRows()); i++ {
			c := "null"
			if !rec.Column(1).IsNull(i) {
				c = rec.Column(1).ValueStr(i)
			}
			got = append(got, strings.Clone(rec.Column(0).ValueStr(i))+"|"+c)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("runtime answers %q, Postgres %q", got, want)
	}
	if len(want) == 0 || !strings.HasSuffix(want[0], "|null") {
		t.Errorf("Postgres answers %q; the test needs a product without orders first", want)
	}
}
