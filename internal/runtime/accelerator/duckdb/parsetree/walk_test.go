package parsetree_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb/parsetree"
)

// TestWalkVisitsEveryNode walks the tree of every corpus statement: it must
// visit each expression, table reference, query node and modifier of the
// JSON exactly once.
func TestWalkVisitsEveryNode(t *testing.T) {
	for i, e := range mustCorpus(t) {
		s := mustDecode(t, e.json)
		got := map[string]int{}
		parsetree.Walk(s.Node, func(n parsetree.Node) bool {
			got[category(n)]++
			return true
		})
		if want := jsonNodes(generic(t, e.json), ""); !reflect.DeepEqual(got, want) {
			t.Errorf("statement %d: visited %v, want %v\n%s", i, got, want, e.sql)
		}
	}
}

// category names the kind of a node.
func category(n parsetree.Node) string {
	switch n.(type) {
	case parsetree.Expr:
		return "expr"
	case parsetree.TableRef:
		return "table"
	case parsetree.QueryNode:
		return "query"
	case parsetree.Modifier:
		return "modifier"
	}
	return fmt.Sprintf("%T", n)
}

var (
	queryTypes    = []string{"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE"}
	tableTypes    = []string{"BASE_TABLE", "JOIN", "SUBQUERY", "TABLE_FUNCTION", "EMPTY", "EXPRESSION_LIST", "PIVOT", "SHOW_REF"}
	modifierTypes = []string{"ORDER_MODIFIER", "LIMIT_MODIFIER", "LIMIT_PERCENT_MODIFIER", "DISTINCT_MODIFIER"}
)

// jsonNodes counts the nodes of a generic JSON tree by kind; key is the
// field that holds v. A function's order_bys is an ORDER_MODIFIER in the
// JSON and a field of the Function in the model.
func jsonNodes(v any, key string) map[string]int {
	out := map[string]int{}
	add := func(m map[string]int) {
		for k, n := range m {
			out[k] += n
		}
	}
	switch x := v.(type) {
	case map[string]any:
		typ, _ := x["type"].(string)
		_, isExpr := x["class"]
		switch {
		case isExpr:
			out["expr"]++
		case slices.Contains(queryTypes, typ):
			out["query"]++
		case slices.Contains(tableTypes, typ) && x["query_location"] != nil:
			out["table"]++
		case slices.Contains(modifierTypes, typ) && key != "order_bys":
			out["modifier"]++
		}
		for k, c := range x {
			add(jsonNodes(c, k))
		}
	case []any:
		for _, c := range x {
			add(jsonNodes(c, key))
		}
	}
	return out
}

// TestWalkOrderAndSkip checks the order of a walk and that returning false
// skips a node's children.
func TestWalkOrderAndSkip(t *testing.T) {
	s := mustDecode(t, corpusEntry(t, "SELECT o.id, p.name FROM orders o JOIN products p").json)
	var order []string
	parsetree.Walk(s.Node, func(n parsetree.Node) bool {
		switch x := n.(type) {
		case *parsetree.ColumnRef:
			order = append(order, strings.Join(x.Names, "."))
		case *parsetree.BaseTable:
			order = append(order, "table "+x.Table)
		default:
			order = append(order, strings.TrimPrefix(fmt.Sprintf("%T", n), "*parsetree."))
		}
		return true
	})
	want := "SelectNode o.id p.name Join table orders table products Comparison o.product_id p.id"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("walk order:\n got %s\nwant %s", got, want)
	}

	s = mustDecode(t, corpusEntry(t, "SELECT p.name, s.total FROM products p LEFT JOIN").json)
	tables := func(skip bool) (out []string) {
		parsetree.Walk(s.Node, func(n parsetree.Node) bool {
			if b, ok := n.(*parsetree.BaseTable); ok {
				out = append(out, b.Table)
			}
			_, sub := n.(*parsetree.SubqueryRef)
			return !(skip && sub)
		})
		return out
	}
	if got, want := tables(false), []string{"products", "orders"}; !slices.Equal(got, want) {
		t.Errorf("tables %v, want %v", got, want)
	}
	if got, want := tables(true), []string{"products"}; !slices.Equal(got, want) {
		t.Errorf("tables skipping subqueries %v, want %v", got, want)
	}
}

// TestRewriteSubstitutes replaces the placeholders of a template
// everywhere, as the maintenance planner does with its aggregate templates.
func TestRewriteSubstitutes(t *testing.T) {
	s := mustDecode(t, corpusEntry(t, "SELECT sum(__a * __w)").json)
	arg := mustDecode(t, corpusEntry(t, "SELECT p.name, o.count % 3 AS bucket").json).Node.(*parsetree.SelectNode).GroupBy[1]
	refs := func() map[string]int {
		out := map[string]int{}
		parsetree.Walk(s.Node, func(n parsetree.Node) bool {
			if c, ok := n.(*parsetree.ColumnRef); ok {
				out[strings.Join(c.Names, ".")]++
			}
			return true
		})
		return out
	}
	before := refs()
	calls := 0
	parsetree.Rewrite(s.Node, func(e parsetree.Expr) parsetree.Expr {
		calls++
		if c, ok := e.(*parsetree.ColumnRef); ok && len(c.Names) == 1 {
			switch c.Names[0] {
			case "__a":
				return parsetree.Clone(arg)
			case "__w":
				return constant(parsetree.TypeInteger, int64(-1))
			}
		}
		return nil
	})
	after := refs()
	if before["__a"] != 4 || before["__w"] != 6 || after["__a"] != 0 || after["__w"] != 0 {
		t.Fatalf("references before %v, after %v", before, after)
	}
	if got, want := after["o.count"], before["o.count"]+before["__a"]; got != want {
		t.Errorf("o.count referenced %d times, want %d", got, want)
	}
	// The root is rewritten too, and a replacement is not visited into.
	calls = 0
	root := parsetree.Rewrite(col("__a"), func(e parsetree.Expr) parsetree.Expr {
		calls++
		return parsetree.Clone(arg)
	})
	if !parsetree.Equal(root.(parsetree.Expr), arg) || calls != 1 {
		t.Errorf("rewritten root %#v after %d calls, want o.count %% 3 after 1", root, calls)
	}
}
