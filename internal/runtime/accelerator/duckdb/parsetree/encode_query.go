package parsetree

// queryNode writes a query node, which may not be nil.
func (w *writer) queryNode(n QueryNode) {
	if n == nil {
		w.null()
		w.fail(ErrInvalid, "want a query node, got nil")
		return
	}
	w.begin('{')
	w.key("type")
	switch n.(type) {
	case *SelectNode:
		w.str("SELECT_NODE")
	case *SetOpNode:
		w.str("SET_OPERATION_NODE")
	case *RecursiveCTENode:
		w.str("RECURSIVE_CTE_NODE")
	default:
		w.fail(ErrUnknownKind, "unknown query node %T", n)
	}
	w.queryBase(n.Base())
	switch x := n.(type) {
	case *SelectNode:
		w.selectNode(x)
	case *SetOpNode:
		w.key("setop_type")
		w.enum(string(x.Op), setOpTypes, "set operation type")
		w.key("left")
		w.queryNode(x.Left)
		w.key("right")
		w.queryNode(x.Right)
		w.key("setop_all")
		w.boolean(x.All)
	case *RecursiveCTENode:
		w.key("cte_name")
		w.str(x.Name)
		w.key("union_all")
		w.boolean(x.UnionAll)
		w.key("left")
		w.queryNode(x.Left)
		w.key("right")
		w.queryNode(x.Right)
		w.key("aliases")
		w.strs(x.Aliases)
		w.key("key_targets")
		w.exprs(x.KeyTargets)
	}
	w.end('}')
}

// queryBase writes the modifiers and the WITH queries of a query node.
func (w *writer) queryBase(b *QueryBase) {
	w.key("modifiers")
	w.begin('[')
	for _, m := range b.Modifiers {
		w.modifier(m)
	}
	w.end(']')
	w.key("cte_map")
	w.begin('{')
	w.key("map")
	w.begin('[')
	for _, c := range b.CTEs {
		w.begin('{')
		w.key("key")
		w.str(c.Name)
		w.key("value")
		w.begin('{')
		w.key("aliases")
		w.strs(c.Aliases)
		w.key("query")
		w.statement(c.Query)
		w.key("materialized")
		w.enum(string(c.Materialized), cteMaterializes, "CTE materialization")
		w.key("key_targets")
		w.exprs(c.KeyTargets)
		w.end('}')
		w.end('}')
	}
	w.end(']')
	w.end('}')
}

func (w *writer) selectNode(x *SelectNode) {
	w.key("select_list")
	w.exprs(x.List)
	w.key("from_table")
	w.tableRef(x.From)
	w.key("where_clause")
	w.expr(x.Where)
	w.key("group_expressions")
	w.exprs(x.GroupBy)
	w.key("group_sets")
	w.begin('[')
	for _, set := range x.GroupingSets {
		w.begin('[')
		for _, i := range set {
			w.uint(i)
		}
		w.end(']')
	}
	w.end(']')
	w.key("aggregate_handling")
	w.enum(string(x.Aggregate), aggregateHandlings, "aggregate handling")
	w.key("having")
	w.expr(x.Having)
	w.key("sample")
	w.sample(x.Sample)
	w.key("qualify")
	w.expr(x.Qualify)
}

func (w *writer) modifier(m Modifier) {
	w.begin('{')
	w.key("type")
	switch x := m.(type) {
	case *OrderModifier:
		w.str("ORDER_MODIFIER")
		w.key("orders")
		w.orders(x.Orders)
	case *LimitModifier:
		w.str("LIMIT_MODIFIER")
		w.key("limit")
		w.expr(x.Limit)
		w.key("offset")
		w.expr(x.Offset)
	case *LimitPercentModifier:
		w.str("LIMIT_PERCENT_MODIFIER")
		w.field("limit", x.Limit)
		w.key("offset")
		w.expr(x.Offset)
	case *DistinctModifier:
		w.str("DISTINCT_MODIFIER")
		w.key("distinct_on_targets")
		w.exprs(x.On)
	default:
		w.fail(ErrUnknownKind, "unknown result modifier %T", m)
	}
	w.end('}')
}

// sample writes a sample clause; nil is null.
func (w *writer) sample(s *Sample) {
	if s == nil {
		w.null()
		return
	}
	w.begin('{')
	w.key("sample_size")
	w.val(s.Size)
	w.key("is_percentage")
	w.boolean(s.IsPercentage)
	w.key("method")
	w.enum(string(s.Method), sampleMethods, "sample method")
	w.key("seed")
	w.int(s.Seed)
	w.end('}')
}
