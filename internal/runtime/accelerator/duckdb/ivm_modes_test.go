//go:build duckdb_arrow

package duckdb_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

// Modes a maintained query reports, as its planner decides them.
const (
	inMemory      = "incremental: kept in memory: "
	inMemorySQL   = "(1 of them read in SQL: expressions or filters)"
	forwardMemory = "incremental: the table's changed rows, projected by the query"
	forwardSQL    = "incremental: the table's changed rows, filtered and projected by the query"
)

// TestPlannerModes names, for each shape the planner tells apart, the mode
// (prefix) a maintained query of that shape reports: how it is kept, or why
// it is computed again on every change.
func TestPlannerModes(t *testing.T) {
	db := MustOpen(t, "")
	ctx := context.Background()
	for _, ddl := range []string{
		`CREATE TABLE products (id INTEGER, name VARCHAR)`,
		`CREATE TABLE orders (id BIGINT, product_id INTEGER, count INTEGER, price DECIMAL(10,2))`,
		`CREATE TABLE tagged (id INTEGER, tags VARCHAR[], wait INTERVAL)`,
		`CREATE TABLE ids (id BIGINT)`,
		`CREATE VIEW recent AS SELECT * FROM orders`,
	} {
		exec(t, db, ddl)
	}
	const agg = `(SELECT product_id, sum(count) AS total FROM orders GROUP BY product_id)`
	for _, c := range []struct{ name, sql, mode string }{
		{"recipe", runtimetest.RankingsSQL, inMemory + "1 aggregate(s) updated from the changed rows; the rest of the query updated by join key"},
		{"top-level aggregate, ordered and limited", `SELECT product_id, sum(count) AS total FROM orders GROUP BY product_id ORDER BY total DESC LIMIT 3`, inMemory},
		{"global aggregate", `SELECT count(*), max(price) FROM orders`, inMemory},
		{"aggregate with a filter reads SQL", `SELECT product_id, count(*) FROM orders WHERE count > 1 GROUP BY product_id`, inMemory + "1 aggregate(s) updated from the changed rows " + inMemorySQL},
		{"aggregate of an expression reads SQL", `SELECT product_id, sum(count * 2) FROM orders GROUP BY product_id`, inMemorySQL},
		{"two aggregates joined", `SELECT a.product_id, a.total, b.n FROM ` + agg + ` a JOIN (SELECT product_id, count(*) AS n FROM orders GROUP BY product_id) b ON a.product_id = b.product_id`, inMemory + "2 aggregate(s)"},
		{"rows of a table", `SELECT id, count FROM orders`, forwardMemory},
		{"all rows of a table", `SELECT * FROM orders`, forwardMemory},
		{"filtered rows of a table", `SELECT id FROM orders WHERE count > 5`, forwardSQL},
		{"computed rows of a table", `SELECT id, count * 2 AS twice FROM orders`, forwardSQL},

		{"a view", `SELECT product_id, count(*) FROM recent GROUP BY product_id`, "recompute: it reads recent, which is not a table of this runtime (a view, say)"},
		{"a set operation", `SELECT id FROM orders UNION SELECT id FROM products`, "recompute: it is a set operation"},
		{"random()", `SELECT product_id, sum(count) FROM orders WHERE random() < 2 GROUP BY product_id`, "recompute: it calls random(), which is not maintained"},
		{"a window", `SELECT id, row_number() OVER () FROM orders`, "recompute: it calls a window function"},
		{"a subquery expression", `SELECT product_id, (SELECT 1) FROM orders GROUP BY product_id`, "recompute: it calls a subquery expression"},
		{"an inner block ordered", `SELECT * FROM (SELECT product_id, sum(count) AS s FROM orders GROUP BY product_id ORDER BY s LIMIT 2) a JOIN products p ON p.id = a.product_id`, "recompute: an aggregate has ORDER BY, LIMIT or DISTINCT of its own"},
		{"distinct aggregate", `SELECT DISTINCT product_id, sum(count) FROM orders GROUP BY product_id`, "recompute: an aggregate has ORDER BY, LIMIT or DISTINCT of its own"},
		{"an inner block with its own WITH", `SELECT * FROM (WITH o AS (SELECT * FROM orders) SELECT product_id, count(*) AS n FROM o GROUP BY product_id) a`, "recompute: an aggregate has a WITH clause of its own"},
		{"HAVING", `SELECT product_id, sum(count) FROM orders GROUP BY product_id HAVING sum(count) > 10`, "recompute: an aggregate has HAVING"},
		{"SAMPLE", `SELECT product_id, count(*) FROM orders GROUP BY product_id USING SAMPLE 10`, "recompute: an aggregate has QUALIFY or SAMPLE"},
		{"GROUP BY ALL", `SELECT product_id, count(*) FROM orders GROUP BY ALL`, "recompute: an aggregate uses GROUP BY ALL"},
		{"ROLLUP", `SELECT product_id, count(*) FROM orders GROUP BY ROLLUP (product_id)`, "recompute: an aggregate has GROUPING SETS, CUBE or ROLLUP"},
		{"GROUP BY position", `SELECT product_id, count(*) FROM orders GROUP BY 1`, "recompute: an aggregate groups by position"},
		{"aggregate of a WITH query", `WITH o AS (SELECT * FROM orders) SELECT product_id, count(*) FROM o GROUP BY product_id`, "recompute: an aggregate reads a WITH query (o), not a table"},
		{"renamed columns", `SELECT a, count(*) FROM orders AS o(a) GROUP BY a`, "recompute: an aggregate reads a table with AT, SAMPLE or renamed columns"},
		{"self-join", `SELECT o.product_id, count(*) FROM orders o JOIN orders p ON o.id = p.id GROUP BY o.product_id`, "recompute: an aggregate reads orders twice (a self-join)"},
		{"left join inside", `SELECT p.id, count(o.id) FROM products p LEFT JOIN orders o ON o.product_id = p.id GROUP BY p.id`, "recompute: an aggregate reads a left regular join"},
		{"no table", `SELECT count(*)`, "recompute: an aggregate reads no table"},
		{"a subquery inside", `SELECT product_id, count(*) FROM (SELECT * FROM orders) GROUP BY product_id`, "recompute: an aggregate reads a subquery"},
		{"a table function inside", `SELECT count(*) FROM range(3)`, "recompute: an aggregate reads a *parsetree.TableFunction"},
		{"an aggregate of an expression of aggregates", `SELECT product_id, sum(count) + 1 FROM orders GROUP BY product_id`, "recompute: an aggregate's select item is neither a GROUP BY expression nor SUM, COUNT, AVG, MIN or MAX"},
		{"DISTINCT inside an aggregate", `SELECT product_id, count(DISTINCT count) FROM orders GROUP BY product_id`, "recompute: an aggregate's select item is neither"},
		{"another aggregate function", `SELECT product_id, string_agg(id::VARCHAR, ',') FROM orders GROUP BY product_id`, "recompute: an aggregate's select item is neither"},
		{"an argument not kept in memory", `SELECT id, max(wait) FROM tagged GROUP BY id`, "recompute: an aggregate's argument is of type"},
		{"a group not kept in memory", `SELECT tags, count(*) FROM tagged GROUP BY tags`, "recompute: an aggregate groups by a value of type"},
		{"WHERE outside the aggregates", `SELECT * FROM ` + agg + ` a WHERE total > 3`, "recompute: the query outside its aggregates has a WHERE"},
		{"SAMPLE outside the aggregates", `SELECT * FROM ` + agg + ` a USING SAMPLE 10`, "recompute: the query outside its aggregates has HAVING, QUALIFY or SAMPLE"},
		{"no aggregate, ordered", `SELECT id FROM orders ORDER BY id LIMIT 5`, "recompute: it has no GROUP BY aggregate over this runtime's tables"},
		{"a join of rows", `SELECT o.id, p.name FROM orders o JOIN products p ON o.product_id = p.id`, "recompute: it has no GROUP BY aggregate over this runtime's tables (a join of rows"},
		{"a right join outside", `SELECT p.name, a.total FROM products p RIGHT JOIN ` + agg + ` a ON a.product_id = p.id`, "recompute: the query outside its aggregates reads a right regular join"},
		{"renamed columns outside", `SELECT * FROM products AS p(x, y) JOIN ` + agg + ` a ON a.product_id = p.x`, "recompute: the query reads a table with AT, SAMPLE or renamed columns"},
		{"a subquery's renamed columns", `SELECT * FROM ` + agg + ` AS a(x, y)`, "recompute: the query names a subquery's columns in its alias"},
		{"a table function outside", `SELECT * FROM ` + agg + ` a JOIN range(3) r ON a.product_id = r.range`, "recompute: the query reads a TableFunction outside its aggregates"},
		{"a joined subquery that does not aggregate", `SELECT * FROM ` + agg + ` a JOIN (SELECT * FROM products) p ON a.product_id = p.id`, "recompute: a WITH query or subquery the query joins is not an aggregate"},
		{"a joined table not kept in memory", `SELECT * FROM ` + agg + ` a JOIN tagged t ON a.product_id = t.id`, "recompute: the query joins tagged, whose column tags of type"},
		{"a join on something else", `SELECT * FROM ` + agg + ` a JOIN products p ON a.product_id < p.id`, "recompute: the query outside its aggregates joins on something else than equal columns"},
		{"a join of different types", `SELECT * FROM ` + agg + ` a JOIN products p ON a.total = p.name`, "recompute: the query outside its aggregates joins columns of different types"},
		{"an expression outside", `SELECT p.name, a.total * 2 FROM products p JOIN ` + agg + ` a ON a.product_id = p.id`, "recompute: the query outside its aggregates selects something else than columns"},
		{"ordered by an expression", `SELECT p.name, a.total FROM products p JOIN ` + agg + ` a ON a.product_id = p.id ORDER BY -a.total`, "recompute: the query orders by something else than its columns"},
		{"a LIMIT not constant", `SELECT * FROM ` + agg + ` a LIMIT 1 + 1`, "recompute: the query's LIMIT is not a constant"},
		{"an OFFSET not constant", `SELECT * FROM ` + agg + ` a LIMIT 2 OFFSET 1 + 1`, "recompute: the query's OFFSET is not a constant"},
		{"DISTINCT outside", `SELECT DISTINCT a.total FROM ` + agg + ` a`, "recompute: the query has DISTINCT, or a LIMIT in percent"},
		{"LIMIT in percent", `SELECT * FROM ` + agg + ` a LIMIT 10%`, "recompute: the query has DISTINCT, or a LIMIT in percent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var m engine.Maintained
			write(t, db, func(tx *duckdb.Tx) error {
				var res *engine.Result
				var err error
				if m, res, err = db.Maintain(tx, c.sql); err == nil {
					res.Release()
				}
				return err
			})
			defer m.Close(ctx)
			if got := m.Mode(); !strings.Contains(got, c.mode) {
				t.Fatalf("mode %q, want it to contain %q", got, c.mode)
			}
		})
	}
}

func exec(t *testing.T, db *duckdb.DB, ddl string) {
	t.Helper()
	write(t, db, func(tx *duckdb.Tx) error { return tx.Exec(ddl) })
}
