package parsetree

import "strconv"

// queryNode reads a query node, which may not be null.
func (d *decoder) queryNode(path string, v any) QueryNode {
	if v == absent {
		return nil
	}
	if v == nil && d.err == nil {
		d.fail(path, ErrInvalid, "want a query node, got null")
	}
	if d.err != nil {
		return nil
	}
	o := d.object(path, v)
	typ := o.str("type")
	var b QueryBase
	o.list("modifiers", func(path string, v any) { b.Modifiers = append(b.Modifiers, d.modifier(path, v)) })
	b.CTEs = d.cteMap(o.at("cte_map"), o.get("cte_map"))
	var n QueryNode
	switch typ {
	case "SELECT_NODE":
		n = d.selectNode(o, b)
	case "SET_OPERATION_NODE":
		n = &SetOpNode{QueryBase: b, Op: SetOpType(o.enum("setop_type", setOpTypes, "set operation type")),
			Left: d.queryNode(o.at("left"), o.get("left")), Right: d.queryNode(o.at("right"), o.get("right")),
			All: o.boolean("setop_all")}
	case "RECURSIVE_CTE_NODE":
		n = &RecursiveCTENode{QueryBase: b, Name: o.str("cte_name"), UnionAll: o.boolean("union_all"),
			Left: d.queryNode(o.at("left"), o.get("left")), Right: d.queryNode(o.at("right"), o.get("right")),
			Aliases: o.strs("aliases"), KeyTargets: o.exprs("key_targets")}
	default:
		o.unknownKind("type", "query node type", typ)
	}
	o.end()
	return n
}

func (d *decoder) selectNode(o *object, b QueryBase) *SelectNode {
	s := &SelectNode{QueryBase: b, List: o.exprs("select_list"), From: d.tableRef(o.at("from_table"), o.get("from_table")),
		Where: o.expr("where_clause"), GroupBy: o.exprs("group_expressions")}
	o.list("group_sets", func(path string, v any) {
		set := []uint64{}
		d.list(path, v, func(path string, v any) {
			n, err := strconv.ParseUint(numberText(v), 10, 64)
			if err != nil {
				d.fail(path, ErrInvalid, "want an unsigned integer, got %s", jsonText(v))
			}
			set = append(set, n)
		})
		s.GroupingSets = append(s.GroupingSets, set)
	})
	s.Aggregate = AggregateHandling(o.enum("aggregate_handling", aggregateHandlings, "aggregate handling"))
	s.Having = o.expr("having")
	s.Sample = d.sample(o.at("sample"), o.get("sample"))
	s.Qualify = o.expr("qualify")
	return s
}

func (d *decoder) cteMap(path string, v any) []CTE {
	o := d.object(path, v)
	var out []CTE
	o.list("map", func(path string, v any) {
		e := d.object(path, v)
		c := CTE{Name: e.str("key")}
		x := d.object(e.at("value"), e.get("value"))
		c.Aliases = x.strs("aliases")
		c.Query = d.statement(x.at("query"), x.get("query"))
		c.Materialized = CTEMaterialize(x.enum("materialized", cteMaterializes, "CTE materialization"))
		c.KeyTargets = x.exprs("key_targets")
		x.end()
		e.end()
		out = append(out, c)
	})
	o.end()
	return out
}

func (d *decoder) modifier(path string, v any) Modifier {
	if v == absent {
		return nil
	}
	o := d.object(path, v)
	var m Modifier
	switch typ := o.str("type"); typ {
	case "ORDER_MODIFIER":
		m = &OrderModifier{Orders: d.orders(o, "orders")}
	case "LIMIT_MODIFIER":
		m = &LimitModifier{Limit: o.expr("limit"), Offset: o.expr("offset")}
	case "LIMIT_PERCENT_MODIFIER":
		m = &LimitPercentModifier{Limit: o.reqExpr("limit"), Offset: o.expr("offset")}
	case "DISTINCT_MODIFIER":
		m = &DistinctModifier{On: o.exprs("distinct_on_targets")}
	default:
		o.unknownKind("type", "result modifier type", typ)
	}
	o.end()
	return m
}

// orderModifier reads a function's ORDER BY, an ORDER_MODIFIER object.
func (d *decoder) orderModifier(path string, v any) []OrderBy {
	m, ok := d.modifier(path, v).(*OrderModifier)
	if !ok && v != absent {
		d.fail(path, ErrUnknownKind, "want an ORDER_MODIFIER")
		return nil
	}
	return m.Orders
}

// sample reads a sample clause; null is nil.
func (d *decoder) sample(path string, v any) *Sample {
	if v == nil || v == absent || d.err != nil {
		return nil
	}
	o := d.object(path, v)
	s := &Sample{Size: d.value(o.at("sample_size"), o.get("sample_size")), IsPercentage: o.boolean("is_percentage"),
		Method: SampleMethod(o.enum("method", sampleMethods, "sample method")), Seed: o.i64("seed")}
	o.end()
	return s
}
