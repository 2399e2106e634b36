//go:build duckdb_arrow

package duckdb_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// recipeView is the cookbook recipe's view, unchanged: no NULLS LAST, no tie
// breaker.
const recipeView = `with a as (SELECT products.id, sum(count) as count FROM orders INNER JOIN products
    ON orders.product_id = products.id GROUP BY products.id)
    select name, count from products left join a on products.id = a.id
    order by count desc limit 5`

// rows answers sql as text rows, NULL as "NULL".
func rows(t *testing.T, db *duckdb.DB, sql string) [][]string {
	t.Helper()
	res, err := db.Query(context.Background(), engine.StoreQuery{SQL: sql})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer res.Release()
	var out [][]string
	for _, rec := range res.Records {
		for i := 0; i < int(rec.NumRows()); i++ {
			var row []string
			for _, col := range rec.Columns() {
				if col.IsNull(i) {
					row = append(row, "NULL")
					continue
				}
				row = append(row, strings.Clone(col.ValueStr(i))) // ValueStr shares the buffer
			}
			out = append(out, row)
		}
	}
	return out
}

func columns(t *testing.T, db *duckdb.DB, sql string) []string {
	t.Helper()
	res, err := db.Query(context.Background(), engine.StoreQuery{SQL: sql})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer res.Release()
	var out []string
	for _, f := range res.Schema.Fields() {
		out = append(out, strings.Clone(f.Name))
	}
	return out
}

// TestRecipeViewRanksProductWithoutOrdersFirst: Postgres (and DataFusion) sort
// NULLs first in a descending order, so the product without orders heads the
// recipe's top five. With DuckDB's default it came last and fell out.
func TestRecipeViewRanksProductWithoutOrdersFirst(t *testing.T) {
	db := MustOpen(t, "")
	var inserts []string
	for i := 1; i <= 7; i++ {
		inserts = append(inserts, fmt.Sprintf("(%d, 'p%d')", i, i))
	}
	write(t, db, func(tx *duckdb.Tx) error {
		return tx.Exec(`CREATE TABLE products (id INTEGER, name VARCHAR);
			INSERT INTO products VALUES ` + strings.Join(inserts, ", ") + `;
			CREATE TABLE orders (id BIGINT, product_id INTEGER, count INTEGER);
			INSERT INTO orders VALUES (1, 1, 10), (2, 2, 20), (3, 3, 30), (4, 4, 40), (5, 5, 50), (6, 6, 60), (7, 6, 1)`)
	})
	// What Postgres 15 answers for this data: NULL first for DESC.
	want := [][]string{{"p7", "NULL"}, {"p6", "61"}, {"p5", "50"}, {"p4", "40"}, {"p3", "30"}}
	if got := rows(t, db, recipeView); !reflect.DeepEqual(got, want) {
		t.Errorf("recipe view = %v, want %v (as Postgres)", got, want)
	}
	// Ascending: NULLs last, as Postgres.
	if got, want := rows(t, db, `select x from (values (2), (null), (1)) t(x) order by x`), [][]string{{"1"}, {"2"}, {"NULL"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ascending = %v, want %v", got, want)
	}
}

func TestIntegerDivisionTruncates(t *testing.T) {
	db := MustOpen(t, "")
	got := rows(t, db, `select 7/2, -7/2, 7.0/2, 7::double/2`)
	if want := [][]string{{"3", "-3", "3.5", "3.5"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("7/2, -7/2, 7.0/2, 7::double/2 = %v, want %v (as DataFusion and Postgres)", got, want)
	}
}
