//go:build duckdb_arrow

package duckdb

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/cqrs-spice/cqrs/internal/runtime/ivm"
)

// An aggregate block is a SELECT with GROUP BY (or aggregates only) over
// inner joins of the store's tables, whose select items are its GROUP BY
// expressions and SUM, COUNT, COUNT(*), AVG, MIN and MAX of one expression
// each (no DISTINCT, FILTER or HAVING). It may be a WITH query, a subquery in
// FROM, or the whole query. Its state is one accumulator per group, in memory.
//
// A block that reads plain columns, joined on equal columns from its first
// table (the fact table) outwards, computes its contributions in memory: a
// changed fact row is joined to in-memory copies of the other tables'
// columns it reads; a change of one of those tables computes the block's
// state again from the store. Any other block (a WHERE, an expression) reads
// its contributions in SQL, once per transaction, from the changed rows.

// blockRef is one table of a block.
type blockRef struct {
	name      string // lower case, as the store names it
	qualifier string // what the block's column references qualify it by
}

// aggItem is one aggregate of a block.
type aggItem struct {
	fn  ivm.AggFn
	arg any // its argument expression; nil for COUNT(*)
}

// blockInfo is a block's analysis, before it is planned.
type blockInfo struct {
	n      node
	refs   []blockRef
	groups []any
	aggs   []aggItem
	out    []ivm.OutCol
	names  []string      // output column names
	schema *arrow.Schema // output columns as the store gives them
}

var aggFnByName = map[string]ivm.AggFn{"sum": ivm.Sum, "count": ivm.Count, "count_star": ivm.CountStar, "avg": ivm.Avg, "min": ivm.Min, "max": ivm.Max}

// block plans the aggregate block n; top says it is the whole query (its
// ORDER BY and LIMIT are the output's). It returns the block's index in
// p.blocks and its analysis, or -1 with p.reason set.
func (p *planner) block(n node, top bool) (int, *blockInfo, error) {
	if why := p.blockShape(n, top); why != "" {
		p.reason = why
		return -1, nil, nil
	}
	b := &blockInfo{n: n}
	if why := p.joinTables(n["from_table"], b); why != "" {
		p.reason = why
		return -1, nil, nil
	}
	if why := p.selectItems(b); why != "" {
		p.reason = why
		return -1, nil, nil
	}
	body := clone(n)
	body["modifiers"] = []any{}
	sql, err := render(p.t, body)
	if err != nil {
		return -1, nil, err
	}
	if b.names, _, err = p.t.describe(sql); err != nil {
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
func (p *planner) blockShape(n node, top bool) string {
	for _, m := range list(n, "modifiers") {
		t := str(m.(map[string]any), "type")
		if !top || t != "ORDER_MODIFIER" && t != "LIMIT_MODIFIER" {
			return "an aggregate has ORDER BY, LIMIT or DISTINCT of its own"
		}
	}
	switch {
	case len(list(obj(n, "cte_map"), "map")) > 0 && !top:
		return "an aggregate has a WITH clause of its own"
	case n["having"] != nil:
		return "an aggregate has HAVING"
	case n["qualify"] != nil || n["sample"] != nil:
		return "an aggregate has QUALIFY or SAMPLE"
	case str(n, "aggregate_handling") != "STANDARD_HANDLING":
		return "an aggregate uses GROUP BY ALL"
	case len(list(n, "group_sets")) > 1:
		return "an aggregate has GROUPING SETS, CUBE or ROLLUP"
	}
	for _, g := range list(n, "group_expressions") {
		if str(g.(map[string]any), "class") == "CONSTANT" {
			return "an aggregate groups by position (GROUP BY 1): name the expressions"
		}
	}
	return ""
}

// joinTables collects the tables of an inner join tree, in order.
func (p *planner) joinTables(v any, b *blockInfo) string {
	f, _ := v.(map[string]any)
	switch str(f, "type") {
	case "BASE_TABLE":
		name := tableRefName(f)
		if p.ctes[name] != nil {
			return "an aggregate reads a WITH query (" + name + "), not a table"
		}
		if f["at_clause"] != nil || f["sample"] != nil || len(list(f, "column_name_alias")) > 0 {
			return "an aggregate reads a table with AT, SAMPLE or renamed columns"
		}
		for _, t := range b.refs {
			if t.name == name {
				return "an aggregate reads " + name + " twice (a self-join)"
			}
		}
		b.refs = append(b.refs, blockRef{name: name, qualifier: qualifierOf(f)})
		return ""
	case "JOIN":
		if str(f, "join_type") != "INNER" || (str(f, "ref_type") != "REGULAR" && str(f, "ref_type") != "CROSS") {
			return "an aggregate reads a " + strings.ToLower(str(f, "join_type")) + " " + strings.ToLower(str(f, "ref_type")) + " join; only inner joins are maintained inside an aggregate (left joins outside it are)"
		}
		if why := p.joinTables(f["left"], b); why != "" {
			return why
		}
		return p.joinTables(f["right"], b)
	case "":
		return "an aggregate reads no table"
	default:
		return "an aggregate reads a " + strings.ToLower(str(f, "type")) + ", not a table or an inner join of tables"
	}
}

// selectItems reads a block's select items: GROUP BY expressions and
// aggregates of one argument.
func (p *planner) selectItems(b *blockInfo) string {
	b.groups = list(b.n, "group_expressions")
	for _, item := range list(b.n, "select_list") {
		e := item.(map[string]any)
		g := -1
		for j, ge := range b.groups {
			if sameExpr(e, ge) {
				g = j
				break
			}
		}
		if g >= 0 {
			b.out = append(b.out, ivm.OutCol{Group: g, Agg: -1})
			continue
		}
		name := strings.ToLower(str(e, "function_name"))
		fn, known := aggFnByName[name]
		args := list(e, "children")
		ok := str(e, "class") == "FUNCTION" && known && e["filter"] == nil && e["distinct"] == false &&
			len(list(obj(e, "order_bys"), "orders")) == 0 &&
			(fn == ivm.CountStar && len(args) == 0 || fn != ivm.CountStar && len(args) == 1)
		if !ok {
			return "an aggregate's select item is neither a GROUP BY expression nor SUM, COUNT, AVG, MIN or MAX of one expression without DISTINCT or FILTER"
		}
		var arg any
		if len(args) == 1 {
			arg = args[0]
			if p.aggregates(node{"select_list": []any{arg}}) {
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
			if (a.fn == ivm.Min || a.fn == ivm.Max) && !ivm.Supported(dt) {
				p.reason = fmt.Sprintf("an aggregate's argument is of type %s, which is not kept in memory", dt)
				return nil, nil
			}
		}
		spec.Plan.Aggs = append(spec.Plan.Aggs, ap)
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
	n := clone(b.n)
	n["modifiers"], n["group_expressions"], n["group_sets"], n["cte_map"] = []any{}, []any{}, []any{}, map[string]any{"map": []any{}}
	var items []any
	for _, a := range b.aggs {
		if a.arg != nil {
			items = append(items, clone(a.arg))
		}
	}
	out := make([]arrow.DataType, len(b.aggs))
	if len(items) == 0 {
		return out, nil
	}
	n["select_list"] = items
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

func (p *planner) templates() ([]any, error) {
	tm, err := parseTree(p.t, stateTemplates)
	if err != nil {
		return nil, err
	}
	return list(tm, "select_list"), nil
}

// stateQuery is the block with the select list of its state rows (see
// ivm.BlockPlan.StateWidth).
func (p *planner) stateQuery(b *blockInfo) (string, error) {
	tmpl, err := p.templates()
	if err != nil {
		return "", err
	}
	n := clone(b.n)
	n["modifiers"] = []any{}
	var items []any
	add := func(e any, alias string) {
		e.(map[string]any)["alias"] = alias
		items = append(items, e)
	}
	for j, g := range b.groups {
		add(clone(g), fmt.Sprintf("_g%d", j))
	}
	for k, a := range b.aggs {
		with := map[string]any{"__a": a.arg}
		switch a.fn {
		case ivm.Sum, ivm.Avg:
			add(substitute(tmpl[tmplSum], with), fmt.Sprintf("_s%d", k))
			add(substitute(tmpl[tmplCount], with), fmt.Sprintf("_c%d", k))
		case ivm.Count:
			add(substitute(tmpl[tmplCount], with), fmt.Sprintf("_c%d", k))
		case ivm.Min:
			add(substitute(tmpl[tmplMin], with), fmt.Sprintf("_m%d", k))
			add(substitute(tmpl[tmplCount], with), fmt.Sprintf("_c%d", k))
		case ivm.Max:
			add(substitute(tmpl[tmplMax], with), fmt.Sprintf("_m%d", k))
			add(substitute(tmpl[tmplCount], with), fmt.Sprintf("_c%d", k))
		}
	}
	add(clone(tmpl[tmplRows]), "_n")
	n["select_list"] = items
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
		var any []string
		for _, g := range groups {
			all := make([]string, len(g))
			for j, v := range g {
				lit, err := sqlLiteral(v)
				if err != nil {
					return "", err
				}
				all[j] = fmt.Sprintf("_g%d IS NOT DISTINCT FROM %s", j, lit)
			}
			any = append(any, "("+strings.Join(all, " AND ")+")")
		}
		return `SELECT * FROM (` + state + `) WHERE ` + strings.Join(any, " OR "), nil
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
	n := clone(b.n)
	n["modifiers"], n["group_expressions"], n["group_sets"], n["having"] = []any{}, []any{}, []any{}, nil
	leaf := findLeaf(n["from_table"], i)
	leaf["table_name"] = p.t.db.captureName(b.refs[i].name)
	leaf["schema_name"], leaf["catalog_name"], leaf["alias"] = "", "", b.refs[i].qualifier
	var items []any
	for _, g := range b.groups {
		items = append(items, clone(g))
	}
	for _, a := range b.aggs {
		if a.arg == nil {
			items = append(items, clone(tmpl[tmplOne]))
		} else {
			items = append(items, clone(a.arg))
		}
	}
	w := clone(tmpl[tmplWeight]).(map[string]any)
	w["column_names"] = []any{b.refs[i].qualifier, "_ivm_w"}
	n["select_list"] = append(items, w)
	return render(p.t, n)
}

// findLeaf returns the i-th table of a join tree, in joinTables's order.
func findLeaf(v any, i int) node {
	var out node
	var k int
	var rec func(v any)
	rec = func(v any) {
		f, _ := v.(map[string]any)
		switch str(f, "type") {
		case "BASE_TABLE":
			if k == i {
				out = f
			}
			k++
		case "JOIN":
			rec(f["left"])
			rec(f["right"])
		}
	}
	rec(v)
	return out
}
