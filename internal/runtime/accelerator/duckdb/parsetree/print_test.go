//go:build duckdb_arrow

package parsetree_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb/parsetree"
)

// mustPrint is the SQL DuckDB prints for a statement.
func mustPrint(tb testing.TB, db *sql.DB, s *parsetree.SelectStatement) string {
	tb.Helper()
	out, err := deserialize(db, mustEncode(tb, s))
	if err != nil {
		tb.Fatalf("print: %v", err)
	}
	return out
}

// TestBuiltTreePrints builds a tree in Go, as the maintenance planner does,
// and has DuckDB print it: the text must be what DuckDB prints for its own
// tree of the same query.
func TestBuiltTreePrints(t *testing.T) {
	db := mustDB(t)
	orders := &parsetree.BaseTable{Table: "orders", Schema: "main"}
	orders.Alias = "o"
	sum := &parsetree.Function{Name: "sum", Args: []parsetree.Expr{
		&parsetree.Function{Name: "*", IsOperator: true, Args: []parsetree.Expr{col("o", "count"), constant(parsetree.TypeInteger, int64(2))}}}}
	sum.Alias = "twice"
	dec := parsetree.Value{Type: parsetree.LogicalType{ID: parsetree.TypeDecimal, Info: &parsetree.DecimalInfo{Width: 4, Scale: 2}}, Data: int64(150)}
	built := &parsetree.SelectStatement{Node: &parsetree.SelectNode{
		List:         []parsetree.Expr{col("o", "product_id"), sum},
		From:         orders,
		Where:        &parsetree.Comparison{Op: parsetree.CompareGreaterThan, Left: col("o", "price"), Right: &parsetree.Constant{Value: dec}},
		GroupBy:      []parsetree.Expr{col("o", "product_id")},
		GroupingSets: [][]uint64{{0}},
		Aggregate:    parsetree.StandardHandling,
		QueryBase: parsetree.QueryBase{Modifiers: []parsetree.Modifier{
			&parsetree.OrderModifier{Orders: []parsetree.OrderBy{{Type: parsetree.OrderDescending, Nulls: parsetree.NullsLast, Expr: col("twice")}}},
			&parsetree.LimitModifier{Limit: constant(parsetree.TypeBigint, int64(5))},
		}},
	}}
	const query = `SELECT o.product_id, sum(o.count * 2) AS twice FROM main.orders AS o WHERE o.price > 1.50
		GROUP BY o.product_id ORDER BY twice DESC NULLS LAST LIMIT 5`
	if got, want := mustPrint(t, db, built), mustPrint(t, db, mustDecode(t, serialize(t, db, query))); got != want {
		t.Errorf("built tree prints\n%s\nwant\n%s", got, want)
	}
}

// TestRewrittenTemplatePrints substitutes the placeholders of a template
// parsed by DuckDB and moves a query to another table, then has DuckDB print
// the results.
func TestRewrittenTemplatePrints(t *testing.T) {
	db := mustDB(t)
	tmpl := mustDecode(t, serialize(t, db, `SELECT sum(__a * __w), min(CASE WHEN __w > 0 THEN __a END)`))
	arg := mustDecode(t, serialize(t, db, `SELECT o.count % 3`)).Node.(*parsetree.SelectNode).List[0]
	parsetree.Rewrite(tmpl.Node, func(e parsetree.Expr) parsetree.Expr {
		if c, ok := e.(*parsetree.ColumnRef); ok && len(c.Names) == 1 {
			switch c.Names[0] {
			case "__a":
				return parsetree.Clone(arg)
			case "__w":
				return col("o", "_ivm_w")
			}
		}
		return nil
	})
	want := mustPrint(t, db, mustDecode(t, serialize(t, db,
		`SELECT sum(o.count % 3 * o._ivm_w), min(CASE WHEN o._ivm_w > 0 THEN o.count % 3 END)`)))
	if got := mustPrint(t, db, tmpl); got != want {
		t.Errorf("rewritten template prints\n%s\nwant\n%s", got, want)
	}

	q := mustDecode(t, serialize(t, db, `SELECT o.id FROM orders o JOIN products p ON o.product_id = p.id WHERE o.count > 2`))
	parsetree.Walk(q.Node, func(n parsetree.Node) bool {
		if b, ok := n.(*parsetree.BaseTable); ok && b.Table == "orders" {
			b.Schema, b.Table = "_spice", "_ivm_c_orders"
		}
		return true
	})
	want = mustPrint(t, db, mustDecode(t, serialize(t, db,
		`SELECT o.id FROM _spice._ivm_c_orders o JOIN products p ON o.product_id = p.id WHERE o.count > 2`)))
	if got := mustPrint(t, db, q); got != want {
		t.Errorf("moved query prints\n%s\nwant\n%s", got, want)
	}
}

// TestNewerSerializationFailsLoudly serializes with DuckDB's newest storage
// compatibility, which adds fields to the tree (as an upgrade would): the
// decoder must refuse the tree and name the field.
func TestNewerSerializationFailsLoudly(t *testing.T) {
	db := mustDB(t)
	if _, err := db.ExecContext(context.Background(), `SET storage_compatibility_version = 'latest'`); err != nil {
		t.Fatal(err)
	}
	_, err := parsetree.Decode(serialize(t, db, `SELECT * FROM a JOIN b ON a.x = b.x`))
	var pe *parsetree.PathError
	if !errors.As(err, &pe) || !errors.Is(err, parsetree.ErrUnknownField) ||
		err.Error() != `statements[0].node.from_table: unknown field "is_implicit"` {
		t.Fatalf("decode: %v, want the unknown field is_implicit of the join", err)
	}
}
