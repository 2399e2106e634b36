//go:build duckdb_arrow

package duckdb

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	pt "github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb/parsetree"
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
func (p *planner) inMemory(root *pt.SelectNode, query string) (*ivm.Plan, error) {
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
	if p.output(root, plan, sides); p.reason != "" {
		return nil, nil
	}
	plan.Blocks = p.blocks
	plan.Output.Buffer = p.t.db.limitBuffer
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
func (p *planner) body(root *pt.SelectNode, plan *ivm.Plan) ([]*side, error) {
	switch {
	case root.Where != nil:
		p.reason = "the query outside its aggregates has a WHERE"
		return nil, nil
	case root.Having != nil || root.Qualify != nil || root.Sample != nil:
		p.reason = "the query outside its aggregates has HAVING, QUALIFY or SAMPLE"
		return nil, nil
	}
	j, isJoin := root.From.(*pt.Join)
	if !isJoin {
		s, err := p.side(root.From)
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
	if j.Type != pt.JoinInner && j.Type != pt.JoinLeft || j.Ref != pt.JoinRegular || j.Condition == nil || len(j.Using) > 0 {
		p.reason = "the query outside its aggregates reads a " + strings.ToLower(string(j.Type)+" "+string(j.Ref)) + " join; only inner and left joins on equal columns are maintained there"
		return nil, nil
	}
	left, err := p.side(j.Left)
	if err != nil || left == nil {
		return nil, err
	}
	right, err := p.side(j.Right)
	if err != nil || right == nil {
		return nil, err
	}
	if left.spec.Block < 0 && right.spec.Block < 0 {
		p.reason = "it has no GROUP BY aggregate over this runtime's tables (a join of rows is computed again on each change)"
		return nil, nil
	}
	right.offset = len(left.names)
	sides := []*side{left, right}
	for _, c := range conjuncts(j.Condition) {
		l, r, isEq := equalColumns(c)
		a, okA := p.bodyColumn(sides, l)
		b, okB := p.bodyColumn(sides, r)
		if !isEq || !okA || !okB || (a < right.offset) == (b < right.offset) {
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
	plan.Body = ivm.BodySpec{Left: left.spec, Right: &right.spec, LeftJoin: j.Type == pt.JoinLeft}
	return sides, nil
}

// side plans one side of the body: an aggregate block (a WITH query or a
// subquery) or a table.
func (p *planner) side(r pt.TableRef) (*side, error) {
	switch t := r.(type) {
	case *pt.BaseTable:
		if t.At != nil || t.Sample != nil || len(t.ColumnAliases) > 0 {
			p.reason = "the query reads a table with AT, SAMPLE or renamed columns"
			return nil, nil
		}
		name := tableRefName(t)
		if cte := p.ctes[name]; cte != nil {
			return p.blockSide(cte.Node, qualifierOf(t))
		}
		return p.tableSide(name, qualifierOf(t))
	case *pt.SubqueryRef:
		if len(t.ColumnAliases) > 0 || t.Sample != nil {
			p.reason = "the query names a subquery's columns in its alias, or samples it"
			return nil, nil
		}
		return p.blockSide(t.Query.Node, t.Alias)
	}
	p.reason = fmt.Sprintf("the query reads a %s outside its aggregates", strings.TrimPrefix(fmt.Sprintf("%T", r), "*parsetree."))
	return nil, nil
}

func (p *planner) blockSide(q pt.QueryNode, qualifier string) (*side, error) {
	n, ok := q.(*pt.SelectNode)
	if !ok || !p.aggregates(n) {
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
func (p *planner) bodyColumn(sides []*side, e pt.Expr) (int, bool) {
	q, col, ok := columnRef(e)
	if !ok {
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

// output plans the projection, ORDER BY and LIMIT: of a query that does not
// aggregate itself over the sides of its body, or of one that does (the
// block's output is the body, already projected). It sets p.reason when it
// cannot.
func (p *planner) output(root *pt.SelectNode, plan *ivm.Plan, sides []*side) {
	topBlock := p.aggregates(root)
	var items []int // each select item's body position
	var aliases []string
	if topBlock {
		items, aliases = plan.Output.Project, sides[0].names
	} else {
		for _, e := range root.List {
			if star, ok := e.(*pt.Star); ok && bareStar(star) && star.Relation == "" {
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
				return
			}
			items = append(items, pos)
			alias := e.Base().Alias
			if alias == "" {
				_, alias, _ = columnRef(e)
			}
			aliases = append(aliases, alias)
		}
		plan.Output.Project = items
	}
	plan.Output.Limit = -1
	for _, m := range root.Modifiers {
		switch m := m.(type) {
		case *pt.OrderModifier:
			for _, o := range m.Orders {
				pos, ok := p.orderColumn(sides, items, aliases, root, o.Expr, topBlock)
				if !ok {
					p.reason = "the query orders by something else than its columns (an expression, say)"
					return
				}
				key, err := p.sortKey(pos, o)
				if err != nil {
					p.reason = err.Error()
					return
				}
				plan.Output.Order = append(plan.Output.Order, key)
			}
		case *pt.LimitModifier:
			var ok bool
			if plan.Output.Limit, ok = constantInt(m.Limit, -1); !ok {
				p.reason = "the query's LIMIT is not a constant"
				return
			}
			if plan.Output.Offset, ok = constantInt(m.Offset, 0); !ok {
				p.reason = "the query's OFFSET is not a constant"
				return
			}
		default:
			p.reason = "the query has DISTINCT, or a LIMIT in percent"
			return
		}
	}
}

// sortKey is an ORDER BY term over body column pos. A term that does not say
// its direction or where NULLs go takes the database's defaults
// (default_order, default_null_order: the runtime sorts NULLs as Postgres
// does, last ascending and first descending).
func (p *planner) sortKey(pos int, o pt.OrderBy) (ivm.SortKey, error) {
	defOrder, defNulls, err := p.t.orderDefaults()
	if err != nil {
		return ivm.SortKey{}, err
	}
	desc := o.Type == pt.OrderDescending || o.Type == pt.OrderDefault && defOrder == "DESCENDING"
	var first bool
	switch o.Nulls {
	case pt.NullsFirst:
		first = true
	case pt.NullsLast:
	default:
		switch defNulls {
		case "NULLS_FIRST":
			first = true
		case "NULLS_LAST":
		case "NULLS_FIRST_ON_ASC_LAST_ON_DESC":
			first = !desc
		case "NULLS_LAST_ON_ASC_FIRST_ON_DESC":
			first = desc
		default:
			return ivm.SortKey{}, fmt.Errorf("the database orders NULLs by default as %q, which the maintained order does not know", defNulls)
		}
	}
	return ivm.SortKey{Col: pos, Desc: desc, NullsFirst: first}, nil
}

// orderColumn resolves an ORDER BY expression to a body position: a select
// item's position (ORDER BY 2), its alias, an expression equal to a select
// item, or a column of the body.
func (p *planner) orderColumn(sides []*side, items []int, aliases []string, root *pt.SelectNode, e pt.Expr, topBlock bool) (int, bool) {
	if _, isConst := e.(*pt.Constant); isConst {
		k, ok := constantInt(e, 0)
		if !ok || k < 1 || int(k) > len(items) {
			return 0, false
		}
		return items[k-1], true
	}
	if q, name, ok := columnRef(e); ok && q == "" {
		for i, a := range aliases {
			if strings.EqualFold(a, name) {
				return items[i], true
			}
		}
	}
	for i, it := range root.List {
		if pt.Equal(it, e) && i < len(items) {
			return items[i], true
		}
	}
	if topBlock {
		return 0, false
	}
	return p.bodyColumn(sides, e)
}

func fieldTypes(s *arrow.Schema) []arrow.DataType {
	out := make([]arrow.DataType, s.NumFields())
	for i, f := range s.Fields() {
		out[i] = f.Type
	}
	return out
}
