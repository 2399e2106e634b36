//go:build duckdb_arrow

package duckdb

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	pt "github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb/parsetree"
	"github.com/cqrs-spice/cqrs/internal/runtime/ivm"
)

// colRef is a column of one table of a block.
type colRef struct {
	table int
	name  string
	typ   arrow.DataType
}

// lookup plans a block's contributions in memory: it needs plain columns
// everywhere (no WHERE, no expression), equalities of columns for every join,
// joined outwards from the first table, and types kept in memory. It returns
// nil when the block must read its contributions in SQL.
func (p *planner) lookup(b *blockInfo) (*ivm.LookupSpec, error) {
	if b.n.Where != nil {
		return nil, nil
	}
	schemas := make([]*arrow.Schema, len(b.refs))
	for i, r := range b.refs {
		s, err := p.tableSchema(r.name)
		if err != nil {
			return nil, err
		}
		schemas[i] = s
	}
	resolve := func(e pt.Expr) (colRef, bool) { return resolveColumn(b.refs, schemas, e) }
	var items []colRef // group values, then aggregate arguments
	for _, g := range b.groups {
		c, ok := resolve(g)
		if !ok {
			return nil, nil
		}
		items = append(items, c)
	}
	for _, a := range b.aggs {
		if a.arg == nil {
			items = append(items, colRef{table: -1})
			continue
		}
		c, ok := resolve(a.arg)
		if !ok {
			return nil, nil
		}
		items = append(items, c)
	}
	edges, ok := joinEdges(b.n.From, resolve)
	if !ok {
		return nil, nil
	}
	return p.placeTables(b, schemas, items, edges)
}

// resolveColumn resolves a column reference against a block's tables.
func resolveColumn(refs []blockRef, schemas []*arrow.Schema, e pt.Expr) (colRef, bool) {
	q, col, ok := columnRef(e)
	if !ok {
		return colRef{}, false
	}
	found := colRef{table: -1}
	for i, r := range refs {
		if q != "" && !strings.EqualFold(q, r.qualifier) {
			continue
		}
		for _, f := range schemas[i].Fields() {
			if strings.EqualFold(f.Name, col) {
				if found.table >= 0 {
					return colRef{}, false // ambiguous: DuckDB would refuse it
				}
				found = colRef{table: i, name: f.Name, typ: f.Type}
			}
		}
	}
	return found, found.table >= 0 && ivm.Supported(found.typ)
}

// edge is one join equality between columns of two tables.
type edge struct{ a, b colRef }

// joinEdges returns the equalities of a join tree's conditions, or false when
// some condition is anything else (or a join has none).
func joinEdges(r pt.TableRef, resolve func(pt.Expr) (colRef, bool)) ([]edge, bool) {
	j, ok := r.(*pt.Join)
	if !ok {
		return nil, true
	}
	if j.Ref != pt.JoinRegular || j.Condition == nil || len(j.Using) > 0 {
		return nil, false
	}
	left, ok := joinEdges(j.Left, resolve)
	if !ok {
		return nil, false
	}
	right, ok := joinEdges(j.Right, resolve)
	if !ok {
		return nil, false
	}
	out := append(left, right...)
	for _, c := range conjuncts(j.Condition) {
		l, r, isEq := equalColumns(c)
		if !isEq {
			return nil, false
		}
		a, okA := resolve(l)
		b, okB := resolve(r)
		if !okA || !okB || a.table == b.table || !sameKind(a.typ, b.typ) {
			return nil, false
		}
		out = append(out, edge{a, b})
	}
	return out, true
}

// sameKind reports whether values of two types compare as equal exactly
// when DuckDB's join would find them equal: integers of any width with each
// other, otherwise the same type.
func sameKind(a, b arrow.DataType) bool {
	integer := func(t arrow.DataType) bool {
		switch t.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
			return true
		}
		return false
	}
	return integer(a) && integer(b) || arrow.TypeEqual(a, b)
}

// placeTables lays out a block's combined row (the fact table's columns, then
// each dimension's, joined outwards from the fact table) and builds the
// LookupSpec; nil when a table cannot be reached by equalities or a
// dimension is too large to copy into memory.
func (p *planner) placeTables(b *blockInfo, schemas []*arrow.Schema, items []colRef, edges []edge) (*ivm.LookupSpec, error) {
	need := make([][]string, len(b.refs)) // columns each table gives the combined row
	want := func(c colRef) {
		for _, n := range need[c.table] {
			if n == c.name {
				return
			}
		}
		need[c.table] = append(need[c.table], c.name)
	}
	for _, c := range items {
		if c.table >= 0 {
			want(c)
		}
	}
	for _, e := range edges {
		want(e.a)
		want(e.b)
	}
	offset := map[int]int{0: 0} // placed table -> its first column in the combined row
	width := len(need[0])
	pos := func(c colRef) int {
		for i, n := range need[c.table] {
			if n == c.name {
				return offset[c.table] + i
			}
		}
		return -1
	}
	spec := &ivm.LookupSpec{Fact: b.refs[0].name, FactCols: need[0]}
	for len(offset) < len(b.refs) {
		next := -1
		for j := range b.refs {
			if _, placed := offset[j]; placed {
				continue
			}
			for _, e := range edges {
				_, pa := offset[e.a.table]
				_, pb := offset[e.b.table]
				if e.a.table == j && pb || e.b.table == j && pa {
					next = j
					break
				}
			}
			if next >= 0 {
				break
			}
		}
		if next < 0 {
			return nil, nil // a table joined to nothing placed: a cross join
		}
		dim := ivm.DimSpec{Table: b.refs[next].name, Cols: need[next]}
		for _, e := range edges {
			mine, other := e.a, e.b
			if mine.table != next {
				mine, other = e.b, e.a
			}
			if mine.table != next {
				continue
			}
			if _, placed := offset[other.table]; !placed {
				continue
			}
			for i, n := range need[next] {
				if n == mine.name {
					dim.Key = append(dim.Key, i)
				}
			}
			dim.Probe = append(dim.Probe, pos(other))
		}
		rows, err := p.t.count(b.refs[next].name)
		if err != nil {
			return nil, err
		}
		if rows > maxArranged {
			return nil, nil
		}
		dim.Load = selectColumns(b.refs[next].name, need[next])
		spec.Dims = append(spec.Dims, dim)
		offset[next] = width
		width += len(need[next])
	}
	for _, c := range items {
		if c.table < 0 {
			spec.Contrib = append(spec.Contrib, -1)
		} else {
			spec.Contrib = append(spec.Contrib, pos(c))
		}
	}
	return spec, nil
}

// selectColumns reads some columns of a table.
func selectColumns(table string, cols []string) string {
	if len(cols) == 0 {
		return `SELECT FROM ` + TableIdent(table)
	}
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = Ident(c)
	}
	return `SELECT ` + strings.Join(q, ", ") + ` FROM ` + TableIdent(table)
}
