//go:build duckdb_arrow

package duckdb

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/cqrs-spice/cqrs/internal/runtime/ivm"
)

// The rest of a query kept in memory: the query's aggregate itself, or a
// SELECT of plain columns FROM one side, or two sides joined (INNER or LEFT)
// on equal columns, where a side is an aggregate block (a WITH query or a
// subquery) or a table, and at least one side is a block; then ORDER BY
// columns and a constant LIMIT and OFFSET.

// side is one side of the body as the planner sees it.
type side struct {
	spec      ivm.SideSpec
	qualifier string
	names     []string // its columns, in order
	types     []arrow.DataType
	offset    int // its first column in a body row
}

// inMemory plans the query for package ivm; nil with p.reason set when it
// cannot be kept in memory.
func (p *planner) inMemory(query string) (*ivm.Plan, error) {
	root := p.root
	plan := &ivm.Plan{}
	var sides []*side
	if p.aggregates(root) {
		i, b, err := p.block(root, true)
		if err != nil || i < 0 {
			return nil, err
		}
		s := &side{spec: ivm.SideSpec{Block: i, Width: len(b.names)}, names: b.names, types: fieldTypes(b.schema)}
		plan.Body = ivm.BodySpec{Left: s.spec}
		for j := range b.names {
			plan.Output.Project = append(plan.Output.Project, j)
		}
		sides = []*side{s}
	} else {
		var err error
		if sides, err = p.body(root, plan); err != nil || sides == nil {
			return nil, err
		}
	}
	if err := p.output(root, plan, sides); err != nil || p.reason != "" {
		return nil, err
	}
	plan.Blocks = p.blocks
	schema, err := p.t.resultSchema(query)
	if err != nil {
		return nil, err
	}
	if schema.NumFields() != len(plan.Output.Project) {
		return nil, fmt.Errorf("plan %d result columns for a query of %d", len(plan.Output.Project), schema.NumFields())
	}
	plan.Schema = schema
	return plan, nil
}

// body plans the FROM of a query that does not aggregate itself.
func (p *planner) body(root node, plan *ivm.Plan) ([]*side, error) {
	switch {
	case root["where_clause"] != nil:
		p.reason = "the query outside its aggregates has a WHERE"
		return nil, nil
	case root["having"] != nil || root["qualify"] != nil || root["sample"] != nil:
		p.reason = "the query outside its aggregates has HAVING, QUALIFY or SAMPLE"
		return nil, nil
	}
	f := obj(root, "from_table")
	if str(f, "type") != "JOIN" {
		s, err := p.side(f)
		if err != nil || s == nil {
			return nil, err
		}
		if s.spec.Block < 0 {
			p.reason = "it has no GROUP BY aggregate over this runtime's tables"
			return nil, nil
		}
		plan.Body = ivm.BodySpec{Left: s.spec}
		return []*side{s}, nil
	}
	kind, ref := str(f, "join_type"), str(f, "ref_type")
	if kind != "INNER" && kind != "LEFT" || ref != "REGULAR" || f["condition"] == nil || len(list(f, "using_columns")) > 0 {
		p.reason = "the query outside its aggregates reads a " + strings.ToLower(kind+" "+ref) + " join; only inner and left joins on equal columns are maintained there"
		return nil, nil
	}
	left, err := p.side(obj(f, "left"))
	if err != nil || left == nil {
		return nil, err
	}
	right, err := p.side(obj(f, "right"))
	if err != nil || right == nil {
		return nil, err
	}
	if left.spec.Block < 0 && right.spec.Block < 0 {
		p.reason = "it has no GROUP BY aggregate over this runtime's tables (a join of rows is computed again on each change)"
		return nil, nil
	}
	right.offset = len(left.names)
	sides := []*side{left, right}
	for _, c := range conjuncts(obj(f, "condition")) {
		a, okA := p.bodyColumn(sides, c["left"])
		b, okB := p.bodyColumn(sides, c["right"])
		if str(c, "class") != "COMPARISON" || str(c, "type") != "COMPARE_EQUAL" || !okA || !okB || (a < right.offset) == (b < right.offset) {
			p.reason = "the query outside its aggregates joins on something else than equal columns of its two sides"
			return nil, nil
		}
		if a >= right.offset {
			a, b = b, a
		}
		if !sameKind(left.types[a], right.types[b-right.offset]) {
			p.reason = "the query outside its aggregates joins columns of different types"
			return nil, nil
		}
		left.spec.Key = append(left.spec.Key, a)
		right.spec.Key = append(right.spec.Key, b-right.offset)
	}
	plan.Body = ivm.BodySpec{Left: left.spec, Right: &right.spec, LeftJoin: kind == "LEFT"}
	return sides, nil
}

// side plans one side of the body: an aggregate block (a WITH query or a
// subquery) or a table.
func (p *planner) side(f node) (*side, error) {
	switch str(f, "type") {
	case "BASE_TABLE":
		if f["at_clause"] != nil || f["sample"] != nil || len(list(f, "column_name_alias")) > 0 {
			p.reason = "the query reads a table with AT, SAMPLE or renamed columns"
			return nil, nil
		}
		name := tableRefName(f)
		if cte := p.ctes[name]; cte != nil {
			return p.blockSide(cte, qualifierOf(f))
		}
		return p.tableSide(name, qualifierOf(f))
	case "SUBQUERY":
		if len(list(f, "column_name_alias")) > 0 {
			p.reason = "the query names a subquery's columns in its alias"
			return nil, nil
		}
		return p.blockSide(obj(obj(f, "subquery"), "node"), str(f, "alias"))
	}
	p.reason = "the query reads a " + strings.ToLower(str(f, "type")) + " outside its aggregates"
	return nil, nil
}

func (p *planner) blockSide(n node, qualifier string) (*side, error) {
	if str(n, "type") != "SELECT_NODE" || !p.aggregates(n) {
		p.reason = "a WITH query or subquery the query joins is not an aggregate"
		return nil, nil
	}
	i, b, err := p.block(n, false)
	if err != nil || i < 0 {
		return nil, err
	}
	return &side{spec: ivm.SideSpec{Block: i, Width: len(b.names)}, qualifier: qualifier, names: b.names, types: fieldTypes(b.schema)}, nil
}

func (p *planner) tableSide(name, qualifier string) (*side, error) {
	s, err := p.tableSchema(name)
	if err != nil {
		return nil, err
	}
	rows, err := p.t.count(name)
	if err != nil {
		return nil, err
	}
	if rows > maxArranged {
		p.reason = fmt.Sprintf("the query joins %s, whose %d rows are more than are copied into memory (%d)", name, rows, maxArranged)
		return nil, nil
	}
	for _, f := range s.Fields() {
		if !ivm.Supported(f.Type) {
			p.reason = fmt.Sprintf("the query joins %s, whose column %s of type %s is not kept in memory", name, f.Name, f.Type)
			return nil, nil
		}
	}
	names := fieldNames(s)
	return &side{spec: ivm.SideSpec{Block: -1, Table: name, Cols: names, Load: selectColumns(name, names), Width: len(names)},
		qualifier: qualifier, names: names, types: fieldTypes(s)}, nil
}

// bodyColumn resolves a column reference to a body position.
func (p *planner) bodyColumn(sides []*side, e any) (int, bool) {
	n, _ := e.(map[string]any)
	if str(n, "class") != "COLUMN_REF" {
		return 0, false
	}
	names := list(n, "column_names")
	var q, col string
	switch len(names) {
	case 1:
		col, _ = names[0].(string)
	case 2:
		q, _ = names[0].(string)
		col, _ = names[1].(string)
	default:
		return 0, false
	}
	found := -1
	for _, s := range sides {
		if q != "" && !strings.EqualFold(q, s.qualifier) {
			continue
		}
		for j, name := range s.names {
			if strings.EqualFold(name, col) {
				if found >= 0 {
					return 0, false
				}
				found = s.offset + j
			}
		}
	}
	return found, found >= 0
}

// output plans the projection, ORDER BY and LIMIT of a query that does not
// aggregate itself (sides has its body), or of one that does (the block's
// output is the body and already projected).
func (p *planner) output(root node, plan *ivm.Plan, sides []*side) error {
	topBlock := p.aggregates(root)
	var items []int // each select item's body position
	var aliases []string
	if topBlock {
		items = plan.Output.Project
		aliases = sides[0].names
	} else {
		for _, it := range list(root, "select_list") {
			e := it.(map[string]any)
			if str(e, "class") == "STAR" && isPlainStar(e) && str(e, "relation_name") == "" {
				for _, s := range sides {
					for j := range s.names {
						items = append(items, s.offset+j)
						aliases = append(aliases, s.names[j])
					}
				}
				continue
			}
			pos, ok := p.bodyColumn(sides, e)
			if !ok {
				p.reason = "the query outside its aggregates selects something else than columns (an expression, say)"
				return nil
			}
			items = append(items, pos)
			alias := str(e, "alias")
			if alias == "" {
				names := list(e, "column_names")
				alias, _ = names[len(names)-1].(string)
			}
			aliases = append(aliases, alias)
		}
		plan.Output.Project = items
	}
	plan.Output.Limit = -1
	for _, m := range list(root, "modifiers") {
		mod := m.(map[string]any)
		switch str(mod, "type") {
		case "ORDER_MODIFIER":
			for _, o := range list(mod, "orders") {
				ord := o.(map[string]any)
				pos, ok := p.orderColumn(sides, items, aliases, root, ord["expression"], topBlock)
				if !ok {
					p.reason = "the query orders by something else than its columns (an expression, say)"
					return nil
				}
				plan.Output.Order = append(plan.Output.Order, ivm.SortKey{Col: pos,
					Desc: str(ord, "type") == "DESCENDING", NullsFirst: str(ord, "null_order") == "NULLS_FIRST" || str(ord, "null_order") == "NULLS FIRST"})
			}
		case "LIMIT_MODIFIER":
			var ok bool
			if plan.Output.Limit, ok = constantInt(mod["limit"], -1); !ok {
				p.reason = "the query's LIMIT is not a constant"
				return nil
			}
			if plan.Output.Offset, ok = constantInt(mod["offset"], 0); !ok {
				p.reason = "the query's OFFSET is not a constant"
				return nil
			}
		default:
			p.reason = "the query has DISTINCT, or a LIMIT in percent"
			return nil
		}
	}
	return nil
}

// orderColumn resolves an ORDER BY expression to a body position: a select
// item's position (ORDER BY 2), its alias, an expression equal to a select
// item, or a column of the body.
func (p *planner) orderColumn(sides []*side, items []int, aliases []string, root node, e any, topBlock bool) (int, bool) {
	n, _ := e.(map[string]any)
	if str(n, "class") == "CONSTANT" {
		k, ok := constantInt(n, 0)
		if !ok || k < 1 || int(k) > len(items) {
			return 0, false
		}
		return items[k-1], true
	}
	if names := list(n, "column_names"); str(n, "class") == "COLUMN_REF" && len(names) == 1 {
		name, _ := names[0].(string)
		for i, a := range aliases {
			if strings.EqualFold(a, name) {
				return items[i], true
			}
		}
	}
	for i, it := range list(root, "select_list") {
		if sameExpr(it, n) && i < len(items) {
			return items[i], true
		}
	}
	if topBlock {
		return 0, false
	}
	return p.bodyColumn(sides, n)
}

// constantInt reads an integer constant; a nil expression gives def.
func constantInt(e any, def int64) (int64, bool) {
	n, _ := e.(map[string]any)
	if n == nil {
		return def, true
	}
	if str(n, "class") != "CONSTANT" {
		return 0, false
	}
	v := obj(n, "value")
	if v["is_null"] == true {
		return def, true
	}
	k, err := strconv.ParseInt(fmt.Sprint(v["value"]), 10, 64)
	return k, err == nil && k >= 0
}

func fieldTypes(s *arrow.Schema) []arrow.DataType {
	out := make([]arrow.DataType, s.NumFields())
	for i, f := range s.Fields() {
		out[i] = f.Type
	}
	return out
}
