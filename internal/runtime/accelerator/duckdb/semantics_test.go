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

// TestAggregateColumnNames: unaliased aggregates are named as upstream
// (DataFusion) names them, not as DuckDB does (count_star(), sum(count)).
func TestAggregateColumnNames(t *testing.T) {
	db := MustOpen(t, "")
	write(t, db, func(tx *duckdb.Tx) error {
		return tx.Exec(`CREATE TABLE products (id INTEGER, name VARCHAR);
			CREATE TABLE orders (id BIGINT, product_id INTEGER, count INTEGER);
			INSERT INTO orders VALUES (1, 1, 10)`)
	})
	for _, tt := range []struct {
		sql  string
		want []string
	}{
		{"select count(*), sum(count) from orders", []string{"count(*)", "sum(orders.count)"}},
		{"SELECT COUNT(*), AVG(count), MIN(id), MAX(o.id), COUNT(DISTINCT product_id) FROM orders o", []string{"count(*)", "avg(o.count)", "min(o.id)", "max(o.id)", "count(DISTINCT o.product_id)"}},
		{"select name, sum(count) from orders join products on products.id = orders.product_id group by name", []string{"name", "sum(orders.count)"}},
		{"select sum(count) as total, count(*) as n from orders", []string{"total", "n"}},
		{"select product_id, count(id) from orders group by product_id", []string{"product_id", "count(orders.id)"}},
		{"select count(*) from orders where id = ?", []string{"count(*)"}},
		{"SELECT * FROM (\nselect count(*), sum(count) from orders\n) AS spice_describe LIMIT 0", []string{"count(*)", "sum(orders.count)"}},
		{"select * from orders, (select count(*) from products) s", []string{"id", "product_id", "count", "count_star()"}},
	} {
		args := []any(nil)
		if strings.Contains(tt.sql, "?") {
			args = []any{int64(1)}
		}
		res, err := db.Query(context.Background(), engine.StoreQuery{SQL: tt.sql, Args: args})
		if err != nil {
			t.Fatalf("%s: %v", tt.sql, err)
		}
		var got []string
		for _, f := range res.Schema.Fields() {
			got = append(got, f.Name)
		}
		for _, rec := range res.Records {
			if !rec.Schema().Equal(res.Schema) {
				t.Errorf("%s: record schema %v differs from result schema %v", tt.sql, rec.Schema(), res.Schema)
			}
		}
		res.Release()
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: columns %q, want %q", tt.sql, got, tt.want)
		}
	}
}
