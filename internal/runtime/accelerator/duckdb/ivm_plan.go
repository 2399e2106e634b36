//go:build duckdb_arrow

package duckdb

import (
	"fmt"
	"strings"
)

// A maintained query is split into aggregate blocks and the rest. An aggregate
// block is a SELECT with GROUP BY (or aggregates only) over inner joins of the
// store's tables, whose select items are its GROUP BY expressions and SUM,
// COUNT, COUNT(*), AVG, MIN and MAX of one expression each (no DISTINCT, FILTER
// or HAVING). It may be a WITH query, a subquery in FROM, or the whole query.
// Its result is kept in a state table, one row per group with the running sums
// and counts, and updated from the rows that changed, weighted +1 (inserted)
// and -1 (deleted): a change costs what the changed rows join to, not what the
// tables hold. The rest of the query (left joins, ORDER BY ... LIMIT,
// projections) is evaluated again over the state tables on each change and
// compared with the previous result; that costs what the state and the tables
// outside any block hold.

// aggBlock is one aggregate block of a maintained query.
type aggBlock struct {
	tables  []blockTable
	groups  int
	aggs    []aggSpec
	minmax  bool
	state   string            // quoted name of the state table
	cols    []string          // state table columns
	initial string            // the state computed from the tables
	delta   map[string]string // table -> the state change computed from its changes
}

type blockTable struct {
	name      string // lower case, as the store names it
	qualifier string // what the block's column references qualify it by
}

type aggSpec struct {
	fn  string // sum, count, count_star, avg, min, max
	arg any    // its argument; nil for count_star
}

// aggTemplates are the expressions a block's state is made of; __a stands for
// an aggregate's argument and __w for a row's weight (+1 or -1, or 1 when the
// state is computed from the tables).
const aggTemplates = `SELECT sum(__a * __w), sum(CASE WHEN __a IS NULL THEN 0 ELSE __w END), sum(__w),
	min(CASE WHEN __w > 0 THEN __a END), max(CASE WHEN __w > 0 THEN __a END),
	sum(CASE WHEN __w < 0 THEN 1 ELSE 0 END), 1, __q._ivm_w`

const (
	tmplSum = iota
	tmplCount
	tmplRows
	tmplMin
	tmplMax
	tmplRetracted
	tmplOne
	tmplWeight
)

// planner analyses a query in a transaction.
type planner struct {
	t      *Tx
	tmpl   []any
	ctes   map[string]bool
	aggFns map[string]bool
	id     uint64 // blocks planned so far
	qid    uint64 // the maintained query's number
	blocks []*aggBlock
	reason string // why the query is not maintained incrementally
	inputs map[string]bool
	views  bool // reads something that is not a table of the store
	// forward is the table of a query of its rows (rowsOfOneTable); plan then
	// returns the query of the changed rows.
	forward *blockTable
}

// plan analyses query. It returns the query to evaluate over the maintained
// state (the query itself when nothing is maintained) and the blocks; reason
// says why nothing is, when so.
func (p *planner) plan(query string) (outer string, err error) {
	root, err := parseTree(p.t, query)
	if err != nil {
		return "", err
	}
	tm, err := parseTree(p.t, aggTemplates)
	if err != nil {
		return "", err
	}
	p.tmpl = list(tm, "select_list")
	if p.aggFns, err = p.t.aggregateFunctions(); err != nil {
		return "", err
	}
	p.ctes = map[string]bool{}
	walk(root, func(n node) bool {
		for _, e := range list(obj(n, "cte_map"), "map") {
			if k, ok := e.(map[string]any)["key"].(string); ok {
				p.ctes[strings.ToLower(k)] = true
			}
		}
		return true
	})
	p.inputs = map[string]bool{}
	walk(root, func(n node) bool {
		if str(n, "type") == "BASE_TABLE" {
			name := tableRefName(n)
			if !p.ctes[name] {
				p.inputs[name] = true
			}
		}
		return true
	})
	for name := range p.inputs {
		ok, err := p.t.tableExists(name)
		if err != nil {
			return "", err
		}
		if !ok {
			p.views = true
			p.reason = "it reads " + name + ", which is not a table of this runtime (a view, say)"
		}
	}
	switch {
	case p.reason != "":
	case str(root, "type") != "SELECT_NODE":
		p.reason = "it is a set operation (UNION, EXCEPT, INTERSECT)"
	case volatile(root) != "":
		p.reason = "it calls " + volatile(root) + ", which is not maintained"
	case p.rowsOfOneTable(root):
		return p.forwardQuery(root)
	default:
		p.visit(root, func(n node) { root = n }, true)
		if p.reason == "" && len(p.blocks) == 0 {
			p.reason = "it has no GROUP BY aggregate over this runtime's tables"
		}
	}
	if p.reason != "" {
		p.blocks = nil
		return query, nil
	}
	return render(p.t, root)
}

// rowsOfOneTable reports whether a query selects rows of one table, each on
// its own (no aggregate, DISTINCT, ORDER BY or LIMIT): its changes are the
// table's changed rows, filtered and projected.
func (p *planner) rowsOfOneTable(n node) bool {
	f := obj(n, "from_table")
	if str(f, "type") != "BASE_TABLE" || p.ctes[tableRefName(f)] || f["at_clause"] != nil || f["sample"] != nil ||
		len(list(n, "modifiers")) > 0 || len(list(obj(n, "cte_map"), "map")) > 0 || p.aggregates(n) ||
		n["having"] != nil || n["qualify"] != nil || n["sample"] != nil {
		return false
	}
	p.forward = &blockTable{name: tableRefName(f), qualifier: str(f, "alias")}
	if p.forward.qualifier == "" {
		p.forward.qualifier = str(f, "table_name")
	}
	return true
}

// forwardQuery plans the query of the changed rows of a one-table query: the
// rows deleted (weight -1) then the rows inserted (+1), net.
func (p *planner) forwardQuery(n node) (string, error) {
	changes := p.t.db.captureName(p.forward.name)
	var parts []string
	for _, cond := range []string{"_ivm_w < 0", "_ivm_w > 0"} {
		sub, err := parseTree(p.t, `SELECT * FROM (SELECT * EXCLUDE (_ivm_w) FROM `+changes+` WHERE `+cond+`) AS `+Ident(p.forward.qualifier))
		if err != nil {
			return "", err
		}
		q := clone(n)
		q["from_table"] = sub["from_table"]
		text, err := render(p.t, q)
		if err != nil {
			return "", err
		}
		parts = append(parts, text)
	}
	// Net of rows inserted and deleted again in the same transaction.
	return `WITH d AS (` + parts[0] + `), i AS (` + parts[1] + `)
		SELECT * FROM (SELECT -1 AS _ivm_w, * FROM (SELECT * FROM d EXCEPT ALL SELECT * FROM i)
		UNION ALL SELECT 1, * FROM (SELECT * FROM i EXCEPT ALL SELECT * FROM d)) ORDER BY _ivm_w`, nil
}

// visit finds the aggregate blocks of a SELECT node and its WITH queries and
// FROM subqueries; set replaces n in the tree.
func (p *planner) visit(n node, set func(node), root bool) {
	if p.reason != "" || str(n, "type") != "SELECT_NODE" {
		return
	}
	for _, e := range list(obj(n, "cte_map"), "map") {
		q := obj(obj(e.(map[string]any), "value"), "query")
		if q != nil {
			p.visit(obj(q, "node"), func(x node) { q["node"] = x }, false)
		}
	}
	walk(n["from_table"], func(f node) bool {
		if str(f, "type") == "SUBQUERY" {
			if sq := obj(f, "subquery"); sq != nil {
				p.visit(obj(sq, "node"), func(x node) { sq["node"] = x }, false)
			}
			return false
		}
		return true
	})
	if p.reason != "" || !p.aggregates(n) {
		return
	}
	if root && len(list(n, "modifiers")) > 0 {
		p.reason = "its aggregating SELECT has ORDER BY, LIMIT or DISTINCT itself: aggregate in a WITH query and order the outer SELECT"
		return
	}
	b, why, err := p.block(n)
	if err != nil {
		p.reason = err.Error()
		return
	}
	if why != "" {
		p.reason = why
		return
	}
	proj, err := parseTree(p.t, b.projection)
	if err != nil {
		p.reason = err.Error()
		return
	}
	set(proj)
	p.blocks = append(p.blocks, b.aggBlock)
}

// aggregates reports whether a SELECT node aggregates.
func (p *planner) aggregates(n node) bool {
	if len(list(n, "group_expressions")) > 0 {
		return true
	}
	found := false
	for _, item := range list(n, "select_list") {
		walk(item, func(e node) bool {
			if str(e, "class") == "FUNCTION" && p.aggFns[strings.ToLower(str(e, "function_name"))] {
				found = true
			}
			return !found
		})
	}
	return found
}

type plannedBlock struct {
	*aggBlock
	projection string
}

// block checks an aggregating SELECT node and plans its state.
func (p *planner) block(n node) (*plannedBlock, string, error) {
	switch {
	case len(list(n, "modifiers")) > 0:
		return nil, "an aggregate has ORDER BY, LIMIT or DISTINCT of its own", nil
	case len(list(obj(n, "cte_map"), "map")) > 0:
		return nil, "an aggregate has a WITH clause of its own", nil
	case n["having"] != nil:
		return nil, "an aggregate has HAVING", nil
	case n["qualify"] != nil || n["sample"] != nil:
		return nil, "an aggregate has QUALIFY or SAMPLE", nil
	case str(n, "aggregate_handling") != "STANDARD_HANDLING":
		return nil, "an aggregate uses GROUP BY ALL", nil
	case len(list(n, "group_sets")) > 1:
		return nil, "an aggregate has GROUPING SETS, CUBE or ROLLUP", nil
	}
	b := &aggBlock{delta: map[string]string{}}
	if why := p.joinTables(n["from_table"], b); why != "" {
		return nil, why, nil
	}
	groups := list(n, "group_expressions")
	for _, g := range groups {
		if str(g.(map[string]any), "class") == "CONSTANT" {
			return nil, "an aggregate groups by position (GROUP BY 1): name the expressions", nil
		}
	}
	b.groups = len(groups)
	type outRef struct{ group, agg int }
	var outs []outRef
	for _, item := range list(n, "select_list") {
		e := item.(map[string]any)
		g := -1
		for j, ge := range groups {
			if sameExpr(e, ge) {
				g = j
				break
			}
		}
		if g >= 0 {
			outs = append(outs, outRef{group: g, agg: -1})
			continue
		}
		fn := strings.ToLower(str(e, "function_name"))
		args := list(e, "children")
		ok := str(e, "class") == "FUNCTION" && e["filter"] == nil && e["distinct"] == false &&
			len(list(obj(e, "order_bys"), "orders")) == 0 &&
			(fn == "count_star" && len(args) == 0 || (fn == "sum" || fn == "count" || fn == "avg" || fn == "min" || fn == "max") && len(args) == 1)
		if !ok {
			return nil, "an aggregate's select item is neither a GROUP BY expression nor SUM, COUNT, AVG, MIN or MAX of one expression without DISTINCT or FILTER", nil
		}
		var arg any
		if len(args) == 1 {
			arg = args[0]
			if p.aggregates(node{"select_list": []any{arg}}) {
				return nil, "an aggregate nests aggregates", nil
			}
		}
		if fn == "min" || fn == "max" {
			b.minmax = true
		}
		outs = append(outs, outRef{group: -1, agg: len(b.aggs)})
		b.aggs = append(b.aggs, aggSpec{fn: fn, arg: arg})
	}

	// The output columns, named and typed as the block gives them.
	blockSQL, err := render(p.t, n)
	if err != nil {
		return nil, "", err
	}
	names, types, err := p.t.describe(blockSQL)
	if err != nil {
		return nil, "", err
	}
	if len(names) != len(outs) {
		return nil, "", fmt.Errorf("describe aggregate: %d columns for %d select items", len(names), len(outs))
	}
	p.id++
	b.state = "_spice." + Ident(fmt.Sprintf("_ivm_s%d_%d", p.qid, p.id))
	var proj []string
	for i, o := range outs {
		var expr string
		if o.group >= 0 {
			expr = fmt.Sprintf("_g%d", o.group)
		} else {
			a, k := b.aggs[o.agg], o.agg
			switch a.fn {
			case "sum":
				expr = fmt.Sprintf("CASE WHEN _c%d > 0 THEN _s%d END", k, k)
			case "count":
				expr = fmt.Sprintf("_c%d", k)
			case "count_star":
				expr = "_n"
			case "avg":
				expr = fmt.Sprintf("CASE WHEN _c%d > 0 THEN CAST(_s%d AS DOUBLE) / _c%d END", k, k, k)
			default:
				expr = fmt.Sprintf("_m%d", k)
			}
		}
		proj = append(proj, "CAST("+expr+" AS "+types[i]+") AS "+Ident(names[i]))
	}
	pb := &plannedBlock{aggBlock: b, projection: "SELECT " + strings.Join(proj, ", ") + " FROM " + b.state}

	// The state's select list: groups, then each aggregate's parts, then the
	// row count (and, for changes, how many rows a group lost).
	items := func(weight any, retracted bool) (out []any, cols []string) {
		add := func(e any, name string) {
			e.(map[string]any)["alias"] = name
			out = append(out, e)
			cols = append(cols, name)
		}
		for j, g := range groups {
			add(clone(g), fmt.Sprintf("_g%d", j))
		}
		for k, a := range b.aggs {
			with := map[string]any{"__a": a.arg, "__w": weight}
			switch a.fn {
			case "sum", "avg":
				add(substitute(p.tmpl[tmplSum], with), fmt.Sprintf("_s%d", k))
				add(substitute(p.tmpl[tmplCount], with), fmt.Sprintf("_c%d", k))
			case "count":
				add(substitute(p.tmpl[tmplCount], with), fmt.Sprintf("_c%d", k))
			case "min":
				add(substitute(p.tmpl[tmplMin], with), fmt.Sprintf("_m%d", k))
			case "max":
				add(substitute(p.tmpl[tmplMax], with), fmt.Sprintf("_m%d", k))
			}
		}
		add(substitute(p.tmpl[tmplRows], map[string]any{"__w": weight}), "_n")
		if retracted {
			add(substitute(p.tmpl[tmplRetracted], map[string]any{"__w": weight}), "_r")
		}
		return out, cols
	}
	initial := clone(n)
	initial["select_list"], b.cols = items(p.tmpl[tmplOne], false) // cols: the state table's
	if b.initial, err = render(p.t, initial); err != nil {
		return nil, "", err
	}
	for i, bt := range b.tables {
		d := clone(n)
		leaf := findLeaf(d["from_table"], i)
		leaf["table_name"] = p.t.db.captureName(bt.name)
		leaf["schema_name"] = ""
		leaf["catalog_name"] = ""
		leaf["alias"] = bt.qualifier
		w := clone(p.tmpl[tmplWeight]).(map[string]any)
		w["column_names"] = []any{bt.qualifier, "_ivm_w"}
		d["select_list"], _ = items(w, true)
		if b.delta[bt.name], err = render(p.t, d); err != nil {
			return nil, "", err
		}
	}
	return pb, "", nil
}

// joinTables collects the tables of an inner join tree, in order.
func (p *planner) joinTables(v any, b *aggBlock) string {
	f, _ := v.(map[string]any)
	switch str(f, "type") {
	case "BASE_TABLE":
		name := tableRefName(f)
		if p.ctes[name] {
			return "an aggregate reads a WITH query (" + name + "), not a table"
		}
		if f["at_clause"] != nil || f["sample"] != nil || len(list(f, "column_name_alias")) > 0 {
			return "an aggregate reads a table with AT, SAMPLE or renamed columns"
		}
		for _, t := range b.tables {
			if t.name == name {
				return "an aggregate reads " + name + " twice (a self-join)"
			}
		}
		q := str(f, "alias")
		if q == "" {
			q = str(f, "table_name")
		}
		b.tables = append(b.tables, blockTable{name: name, qualifier: q})
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

// tableRefName is the store's name of a table reference: lower case,
// schema-qualified unless in main.
func tableRefName(f node) string {
	name := strings.ToLower(str(f, "table_name"))
	if s := strings.ToLower(str(f, "schema_name")); s != "" && s != "main" {
		name = s + "." + name
	}
	return name
}

// aggregateFunctions returns the names of DuckDB's aggregate functions.
func (t *Tx) aggregateFunctions() (map[string]bool, error) {
	rows, err := t.conn.QueryContext(t.ctx, `SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type = 'aggregate'`)
	if err != nil {
		return nil, fmt.Errorf("list aggregate functions: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{"count_star": true}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out[strings.ToLower(s)] = true
	}
	return out, rows.Err()
}

// describe returns the names and types of a query's result columns.
func (t *Tx) describe(query string) (names, types []string, err error) {
	rows, err := t.conn.QueryContext(t.ctx, `SELECT column_name, column_type FROM (DESCRIBE `+query+`)`)
	if err != nil {
		return nil, nil, fmt.Errorf("describe: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n, ty string
		if err := rows.Scan(&n, &ty); err != nil {
			return nil, nil, err
		}
		names, types = append(names, n), append(types, ty)
	}
	return names, types, rows.Err()
}
