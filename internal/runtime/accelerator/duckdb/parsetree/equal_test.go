package parsetree_test

import (
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb/parsetree"
)

// TestEqualIgnoresAliasAndLocation matches select items with GROUP BY
// expressions, as the maintenance planner does.
func TestEqualIgnoresAliasAndLocation(t *testing.T) {
	n := mustDecode(t, corpusEntry(t, "SELECT p.name, o.count % 3 AS bucket").json).Node.(*parsetree.SelectNode)
	list, groups := n.List, n.GroupBy
	if list[1].Base().Alias != "bucket" || list[1].Base().Location == groups[1].Base().Location {
		t.Fatalf("the select item is not an aliased copy of the group: %#v %#v", list[1], groups[1])
	}
	for _, tc := range []struct {
		a, b parsetree.Expr
		want bool
	}{
		{list[0], groups[0], true},
		{list[1], groups[1], true},
		{groups[1], list[1], true},
		{list[0], groups[1], false},
		{list[1], groups[0], false},
		{list[2], list[3], false},
		{nil, nil, true},
		{list[0], nil, false},
		{nil, list[0], false},
	} {
		if got := parsetree.Equal(tc.a, tc.b); got != tc.want {
			t.Errorf("Equal(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestEqualComparesNestedAliases: below the top, an alias names a struct
// field or a subquery column, so it counts.
func TestEqualComparesNestedAliases(t *testing.T) {
	pack := func(field, alias string) parsetree.Expr {
		one := constant(parsetree.TypeInteger, int64(1))
		one.Alias = field
		f := &parsetree.Function{Name: "struct_pack", Args: []parsetree.Expr{one}}
		f.Alias = alias
		return f
	}
	if !parsetree.Equal(pack("a", "x"), pack("a", "y")) {
		t.Error("struct_pack(a := 1) AS x differs from struct_pack(a := 1) AS y")
	}
	if parsetree.Equal(pack("a", ""), pack("b", "")) {
		t.Error("struct_pack(a := 1) equals struct_pack(b := 1)")
	}
	if parsetree.Equal(constant(parsetree.TypeInteger, "1"), constant(parsetree.TypeInteger, "1")) {
		t.Error("an expression Encode refuses equals something")
	}
}

// TestEqualOverTheCorpus: every expression of the corpus equals its clone
// with another alias and location, and no two items of a SELECT list are
// equal but those the parser makes the same.
func TestEqualOverTheCorpus(t *testing.T) {
	same := []struct {
		prefix string
		k, j   int
	}{
		{"SELECT a::TINYINT, a::SMALLINT", 9, 10},       // FLOAT, REAL
		{"SELECT a::VARCHAR, a::TEXT", 0, 1},            // VARCHAR, TEXT
		{"SELECT (SELECT max(b) FROM u), EXISTS", 3, 4}, // a IN (SELECT b ...), a = ANY (SELECT b ...)
	}
	compared, equal := 0, 0
	for i, e := range mustCorpus(t) {
		parsetree.Walk(mustDecode(t, e.json).Node, func(n parsetree.Node) bool {
			sel, ok := n.(*parsetree.SelectNode)
			if !ok {
				return true
			}
			for j, x := range sel.List {
				c := parsetree.Clone(x)
				c.Base().Alias, c.Base().Location = "other", parsetree.NoLocation-1
				if !parsetree.Equal(x, c) {
					t.Errorf("statement %d: item %d differs from its clone", i, j)
				}
				for k := range j {
					compared++
					got := parsetree.Equal(x, sel.List[k])
					want := false
					for _, p := range same {
						want = want || strings.HasPrefix(e.sql, p.prefix) && p.k == k && p.j == j
					}
					if got != want {
						t.Errorf("statement %d: Equal(item %d, item %d) = %v, want %v\n%s", i, k, j, got, want, e.sql)
					}
					if got {
						equal++
					}
				}
			}
			return true
		})
	}
	if compared < 1000 || equal != len(same) {
		t.Errorf("compared %d pairs, %d equal; want at least 1000, %d equal", compared, equal, len(same))
	}
}
