//go:build duckdb_arrow

package duckdb

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	pt "github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb/parsetree"
	"github.com/cqrs-spice/cqrs/internal/runtime/ivm"
)

// An aggregate block is a SELECT with GROUP BY (or aggregates only) over
// inner joins of the store's tables, whose select items are its GROUP BY
// expressions and SUM, COUNT, COUNT(*), AVG, MIN and MAX of one expression
// each (no DISTINCT, FILTER or HAVING). It may be a WITH query, a subquery in
// FROM, or the whole query. Its state is one accumulator per group, in memory.
//
// A block that reads plain columns, joined on equal columns from its first
// table (the fact table) outwards, computes its contributions in memory
// (ivm_lookup.go): a changed fact row is joined to in-memory copies of the
// other tables' columns it reads; a change of one of those tables computes the
// block's state again from the store. Any other block (a WHERE, an
// expression) reads its contributions in SQL, once per transaction, from the
// changed rows.

// blockRef is one table of a block.
type blockRef struct {
	name      string // lower case, as the store names it
	qualifier string // what the block's column references qualify it by
}

// aggItem is one aggregate of a block.
type aggItem struct {
	fn  ivm.AggFn
	arg pt.Expr // nil for COUNT(*)
}

// blockInfo is a block's analysis.
type blockInfo struct {
	n      *pt.SelectNode
	refs   []blockRef
	groups []pt.Expr
	aggs   []aggItem
	out    []ivm.OutCol
	names  []string      // output column names
	schema *arrow.Schema // output columns as the store gives them
}

var aggFnByName = map[string]ivm.AggFn{"sum": ivm.Sum, "count": ivm.Count, "count_star": ivm.CountStar, "avg": ivm.Avg, "min": ivm.Min, "max": ivm.Max}

// block plans the aggregate block n; top says it is the whole query (its
// ORDER BY and LIMIT are the output's). It returns the block's index in
// p.blocks and its analysis, or -1 with p.reason set.
func (p *planner) block(n *pt.SelectNode, top bool) (int, *blockInfo, error) {
	if why := blockShape(n, top); why != "" {
		p.reason = why
		return -1, nil, nil
	}
	b := &blockInfo{n: n}
	if why := p.joinTables(n.From, b); why != "" {
		p.reason = why
		return -1, nil, nil
	}
	if why := p.selectItems(b); why != "" {
		p.reason = why
		return -1, nil, nil
	}
	body := pt.Clone(n)
	body.Modifiers = nil
	sql, err := render(p.t, body)
	if err != nil {
		return -1, nil, err
	}
	if b.names, err = p.t.columnNames(sql); err != nil {
		return -1, nil, err
	}
	if b.schema, err = p.t.scanSchema(`SELECT * FROM (` + sql + `) LIMIT 0`); err != nil {
		return -1, nil, err
	}
	spec, err := p.blockSpec(b)
	if err != nil || spec == nil {
		return -1, nil, err
	}
	p.blocks = append(p.blocks, *spec)
	return len(p.blocks) - 1, b, nil
}

// blockShape says why an aggregating SELECT is not a block ("" when it is).
func blockShape(n *pt.SelectNode, top bool) string {
	for _, m := range n.Modifiers {
		switch m.(type) {
		case *pt.OrderModifier, *pt.LimitModifier:
			if top {
				continue
			}
		}
		return "an aggregate has ORDER BY, LIMIT or DISTINCT of its own"
	}
	switch {
	case len(n.CTEs) > 0 && !top:
		return "an aggregate has a WITH clause of its own"
	case n.Having != nil:
		return "an aggregate has HAVING"
	case n.Qualify != nil || n.Sample != nil:
		return "an aggregate has QUALIFY or SAMPLE"
	case n.Aggregate != pt.StandardHandling:
		return "an aggregate uses GROUP BY ALL"
	case len(n.GroupingSets) > 1:
		return "an aggregate has GROUPING SETS, CUBE or ROLLUP"
	}
	for _, g := range n.GroupBy {
		if _, ok := g.(*pt.Constant); ok {
			return "an aggregate groups by position (GROUP BY 1): name the expressions"
		}
	}
	return ""
}

// joinTables collects the tables of an inner join tree, in order.
func (p *planner) joinTables(r pt.TableRef, b *blockInfo) string {
	switch t := r.(type) {
	case *pt.BaseTable:
		name := tableRefName(t)
		if p.ctes[name] != nil {
			return "an aggregate reads a WITH query (" + name + "), not a table"
		}
		if t.At != nil || t.Sample != nil || len(t.ColumnAliases) > 0 {
			return "an aggregate reads a table with AT, SAMPLE or renamed columns"
		}
		for _, o := range b.refs {
			if o.name == name {
				return "an aggregate reads " + name + " twice (a self-join)"
			}
		}
		b.refs = append(b.refs, blockRef{name: name, qualifier: qualifierOf(t)})
		return ""
	case *pt.Join:
		if t.Type != pt.JoinInner || t.Ref != pt.JoinRegular && t.Ref != pt.JoinCross {
			return "an aggregate reads a " + strings.ToLower(string(t.Type)+" "+string(t.Ref)) + " join; only inner joins are maintained inside an aggregate (left joins outside it are)"
		}
		if why := p.joinTables(t.Left, b); why != "" {
			return why
		}
		return p.joinTables(t.Right, b)
	case *pt.EmptyRef:
		return "an aggregate reads no table"
	case *pt.SubqueryRef:
		return "an aggregate reads a subquery, not a table or an inner join of tables"
	}
	return fmt.Sprintf("an aggregate reads a %T, not a table or an inner join of tables", r)
}

// selectItems reads a block's select items: GROUP BY expressions and
// aggregates of one argument.
func (p *planner) selectItems(b *blockInfo) string {
	b.groups = b.n.GroupBy
	for _, e := range b.n.List {
		g := -1
		for j, ge := range b.groups {
			if pt.Equal(e, ge) {
				g = j
				break
			}
		}
		if g >= 0 {
			b.out = append(b.out, ivm.OutCol{Group: g, Agg: -1})
			continue
		}
		f, isFn := e.(*pt.Function)
		if !isFn {
			return "an aggregate's select item is neither a GROUP BY expression nor SUM, COUNT, AVG, MIN or MAX of one expression without DISTINCT or FILTER"
		}
		fn, known := aggFnByName[strings.ToLower(f.Name)]
		ok := known && f.Filter == nil && !f.Distinct && len(f.OrderBy) == 0 &&
			(fn == ivm.CountStar && len(f.Args) == 0 || fn != ivm.CountStar && len(f.Args) == 1)
		if !ok {
			return "an aggregate's select item is neither a GROUP BY expression nor SUM, COUNT, AVG, MIN or MAX of one expression without DISTINCT or FILTER"
		}
		var arg pt.Expr
		if len(f.Args) == 1 {
			arg = f.Args[0]
			if p.hasAggregate(arg) {
				return "an aggregate nests aggregates"
			}
		}
		b.out = append(b.out, ivm.OutCol{Group: -1, Agg: len(b.aggs)})
		b.aggs = append(b.aggs, aggItem{fn: fn, arg: arg})
	}
	return ""
}

// blockSpec plans a block's state and how its contributions are computed.
func (p *planner) blockSpec(b *blockInfo) (*ivm.BlockSpec, error) {
	spec := &ivm.BlockSpec{Plan: ivm.BlockPlan{Groups: len(b.groups), Out: b.out, Global: len(b.groups) == 0}}
	for _, r := range b.refs {
		spec.Tables = append(spec.Tables, r.name)
	}
	argTypes, err := p.argTypes(b)
	if err != nil {
		return nil, err
	}
	for k, a := range b.aggs {
		ap := ivm.AggPlan{Fn: a.fn, Arg: len(b.groups) + k}
		if dt := argTypes[k]; dt != nil {
			switch t := dt.(type) {
			case *arrow.Float32Type, *arrow.Float64Type:
				ap.Float = true
			case *arrow.Decimal128Type:
				ap.Scale = t.Scale
			}
			if !ivm.Supported(dt) {
				p.reason = fmt.Sprintf("an aggregate's argument is of type %s, which is not kept in memory", dt)
				return nil, nil
			}
		}
		spec.Plan.Aggs = append(spec.Plan.Aggs, ap)
	}
	for i, f := range b.schema.Fields() {
		if b.out[i].Group >= 0 && !ivm.Supported(f.Type) {
			p.reason = fmt.Sprintf("an aggregate groups by a value of type %s, which is not kept in memory", f.Type)
			return nil, nil
		}
	}
	if spec.State, err = p.stateQuery(b); err != nil {
		return nil, err
	}
	if err := p.groupState(b, spec); err != nil {
		return nil, err
	}
	lookup, err := p.lookup(b)
	if err != nil {
		return nil, err
	}
	if lookup != nil {
		spec.Lookup = lookup
		return spec, nil
	}
	spec.Contrib = map[string]string{}
	for i, r := range b.refs {
		q, err := p.contribQuery(b, i)
		if err != nil {
			return nil, err
		}
		spec.Contrib[r.name] = q
		p.inSQL[r.name] = true
	}
	return spec, nil
}

// argTypes returns the type of each aggregate's argument (nil for COUNT(*)).
func (p *planner) argTypes(b *blockInfo) ([]arrow.DataType, error) {
	n := pt.Clone(b.n)
	n.Modifiers, n.GroupBy, n.GroupingSets, n.CTEs = nil, nil, nil, nil
	n.List = nil
	for _, a := range b.aggs {
		if a.arg != nil {
			n.List = append(n.List, pt.Clone(a.arg))
		}
	}
	out := make([]arrow.DataType, len(b.aggs))
	if len(n.List) == 0 {
		return out, nil
	}
	sql, err := render(p.t, n)
	if err != nil {
		return nil, err
	}
	s, err := p.t.scanSchema(`SELECT * FROM (` + sql + `) LIMIT 0`)
	if err != nil {
		return nil, err
	}
	j := 0
	for k, a := range b.aggs {
		if a.arg != nil {
			out[k] = s.Field(j).Type
			j++
		}
	}
	return out, nil
}

// stateTemplates are the parts of a state row, __a standing for an argument.
const stateTemplates = `SELECT sum(__a), count(__a), min(__a), max(__a), count(*), 1, __q._ivm_w`

const (
	tmplSum = iota
	tmplCount
	tmplMin
	tmplMax
	tmplRows
	tmplOne
	tmplWeight
)

func (p *planner) templates() ([]pt.Expr, error) {
	n, err := parseSelectNode(p.t, stateTemplates)
	if err != nil {
		return nil, err
	}
	return n.List, nil
}

// withAlias returns e named alias.
func withAlias(e pt.Expr, alias string) pt.Expr {
	e.Base().Alias = alias
	return e
}

// stateQuery is the block with the select list of its state rows (see
// ivm.BlockPlan.StateWidth).
func (p *planner) stateQuery(b *blockInfo) (string, error) {
	tmpl, err := p.templates()
	if err != nil {
		return "", err
	}
	n := pt.Clone(b.n)
	n.Modifiers, n.List = nil, nil
	for j, g := range b.groups {
		n.List = append(n.List, withAlias(pt.Clone(g), fmt.Sprintf("_g%d", j)))
	}
	for k, a := range b.aggs {
		with := map[string]pt.Expr{"__a": a.arg}
		part := func(t int, name string) {
			n.List = append(n.List, withAlias(substitute(tmpl[t], with), fmt.Sprintf("%s%d", name, k)))
		}
		switch a.fn {
		case ivm.Sum, ivm.Avg:
			part(tmplSum, "_s")
			part(tmplCount, "_c")
		case ivm.Count:
			part(tmplCount, "_c")
		case ivm.Min:
			part(tmplMin, "_m")
			part(tmplCount, "_c")
		case ivm.Max:
			part(tmplMax, "_m")
			part(tmplCount, "_c")
		}
	}
	n.List = append(n.List, withAlias(pt.Clone(tmpl[tmplRows]), "_n"))
	return render(p.t, n)
}

// groupState lets the block compute the state of some groups only (a MIN or
// MAX whose extreme left) when its group values can be written as literals;
// otherwise such a change computes the whole state again.
func (p *planner) groupState(b *blockInfo, spec *ivm.BlockSpec) error {
	hasExtreme := false
	for _, a := range b.aggs {
		hasExtreme = hasExtreme || a.fn == ivm.Min || a.fn == ivm.Max
	}
	if !hasExtreme || len(b.groups) == 0 {
		return nil
	}
	s, err := p.t.scanSchema(`SELECT * FROM (` + spec.State + `) LIMIT 0`)
	if err != nil {
		return err
	}
	for j := range b.groups {
		if !literalType(s.Field(j).Type) {
			return nil
		}
	}
	state := spec.State
	spec.GroupState = func(groups []ivm.Row) (string, error) {
		var some []string
		for _, g := range groups {
			all := make([]string, len(g))
			for j, v := range g {
				lit, err := sqlLiteral(v)
				if err != nil {
					return "", err
				}
				all[j] = fmt.Sprintf("_g%d IS NOT DISTINCT FROM %s", j, lit)
			}
			some = append(some, "("+strings.Join(all, " AND ")+")")
		}
		return `SELECT * FROM (` + state + `) WHERE ` + strings.Join(some, " OR "), nil
	}
	return nil
}

// contribQuery is the block over the changes of its table i, giving one
// contribution row per changed row: group values, the aggregates' arguments
// (1 for COUNT(*)), and the row's weight.
func (p *planner) contribQuery(b *blockInfo, i int) (string, error) {
	tmpl, err := p.templates()
	if err != nil {
		return "", err
	}
	n := pt.Clone(b.n)
	n.Modifiers, n.GroupBy, n.GroupingSets, n.Having = nil, nil, nil, nil
	leaf := findLeaf(n.From, i)
	leaf.Table, leaf.Schema, leaf.Catalog, leaf.Alias = p.t.db.captureName(b.refs[i].name), "", "", b.refs[i].qualifier
	n.List = nil
	for _, g := range b.groups {
		n.List = append(n.List, pt.Clone(g))
	}
	for _, a := range b.aggs {
		if a.arg == nil {
			n.List = append(n.List, pt.Clone(tmpl[tmplOne]))
		} else {
			n.List = append(n.List, pt.Clone(a.arg))
		}
	}
	w := pt.Clone(tmpl[tmplWeight]).(*pt.ColumnRef)
	w.Names = []string{b.refs[i].qualifier, "_ivm_w"}
	n.List = append(n.List, w)
	return render(p.t, n)
}

// findLeaf returns the i-th table of a join tree, in joinTables's order.
func findLeaf(r pt.TableRef, i int) *pt.BaseTable {
	var out *pt.BaseTable
	var k int
	var rec func(r pt.TableRef)
	rec = func(r pt.TableRef) {
		switch t := r.(type) {
		case *pt.BaseTable:
			if k == i {
				out = t
			}
			k++
		case *pt.Join:
			rec(t.Left)
			rec(t.Right)
		}
	}
	rec(r)
	return out
}
