package parsetree

// Walk calls fn for n and every node under it, depth first, parents before
// children and children in the order DuckDB serializes them. It descends
// into everything: WITH queries, subqueries in FROM and in expressions, set
// operations, ORDER BY and LIMIT modifiers, frames of window functions.
// When fn returns false, Walk skips the children of that node.
func Walk(n Node, fn func(Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	children(n, func(p *Expr) {
		if *p != nil {
			Walk(*p, fn)
		}
	}, func(c Node) { Walk(c, fn) })
}

// Rewrite replaces expressions in the tree of n, in place. It calls fn for
// every expression, parents before children; when fn returns an expression,
// that takes the place of the one visited and Rewrite does not visit into
// it; when fn returns nil, Rewrite visits the children. It returns n, or
// what replaced n when n is an expression. Clone n first to keep the
// original.
func Rewrite(n Node, fn func(Expr) Expr) Node {
	if e, ok := n.(Expr); ok {
		if r := fn(e); r != nil {
			return r
		}
	}
	children(n, func(p *Expr) {
		if *p != nil {
			*p = Rewrite(*p, fn).(Expr)
		}
	}, func(c Node) { Rewrite(c, fn) })
	return n
}

// children calls expr with the place of each expression child of n (nil
// ones included) and node with each other child, in serialization order.
func children(n Node, expr func(*Expr), node func(Node)) {
	exprs := func(l []Expr) {
		for i := range l {
			expr(&l[i])
		}
	}
	orders := func(l []OrderBy) {
		for i := range l {
			expr(&l[i].Expr)
		}
	}
	switch x := n.(type) {
	case *Function:
		exprs(x.Args)
		expr(&x.Filter)
		orders(x.OrderBy)
	case *Comparison:
		expr(&x.Left)
		expr(&x.Right)
	case *Conjunction:
		exprs(x.Children)
	case *Operator:
		exprs(x.Children)
	case *Cast:
		expr(&x.Child)
	case *Case:
		for i := range x.Checks {
			expr(&x.Checks[i].When)
			expr(&x.Checks[i].Then)
		}
		expr(&x.Else)
	case *Between:
		expr(&x.Input)
		expr(&x.Lower)
		expr(&x.Upper)
	case *Star:
		for i := range x.Replace {
			expr(&x.Replace[i].Expr)
		}
		expr(&x.Expr)
	case *Subquery:
		statement(x.Query, node)
		expr(&x.Child)
	case *Window:
		exprs(x.Args)
		exprs(x.Partitions)
		orders(x.Orders)
		for _, p := range []*Expr{&x.StartExpr, &x.EndExpr, &x.Offset, &x.Default, &x.Filter} {
			expr(p)
		}
		orders(x.ArgOrders)
	case *Lambda:
		expr(&x.Params)
		expr(&x.Body)
	case *Collate:
		expr(&x.Child)
	case TableRef:
		tableRefChildren(x, expr, node)
	case QueryNode:
		queryChildren(x, expr, node)
	case *OrderModifier:
		orders(x.Orders)
	case *LimitModifier:
		expr(&x.Limit)
		expr(&x.Offset)
	case *LimitPercentModifier:
		expr(&x.Limit)
		expr(&x.Offset)
	case *DistinctModifier:
		exprs(x.On)
	}
}

func tableRefChildren(r TableRef, expr func(*Expr), node func(Node)) {
	switch x := r.(type) {
	case *BaseTable:
		if x.At != nil {
			expr(&x.At.Expr)
		}
	case *Join:
		node(x.Left)
		node(x.Right)
		expr(&x.Condition)
		for i := range x.DuplicateEliminated {
			expr(&x.DuplicateEliminated[i])
		}
	case *SubqueryRef:
		statement(x.Query, node)
	case *TableFunction:
		expr(&x.Function)
	case *ValuesRef:
		for _, row := range x.Values {
			for i := range row {
				expr(&row[i])
			}
		}
	case *PivotRef:
		node(x.Source)
		for i := range x.Aggregates {
			expr(&x.Aggregates[i])
		}
		for _, p := range x.Pivots {
			for i := range p.Exprs {
				expr(&p.Exprs[i])
			}
			for i := range p.Entries {
				expr(&p.Entries[i].Star)
			}
		}
	case *ShowRef:
		if x.Query != nil {
			node(x.Query)
		}
	}
}

func queryChildren(q QueryNode, expr func(*Expr), node func(Node)) {
	b := q.Base()
	for _, m := range b.Modifiers {
		node(m)
	}
	for i := range b.CTEs {
		statement(b.CTEs[i].Query, node)
		for j := range b.CTEs[i].KeyTargets {
			expr(&b.CTEs[i].KeyTargets[j])
		}
	}
	switch x := q.(type) {
	case *SelectNode:
		for i := range x.List {
			expr(&x.List[i])
		}
		node(x.From)
		expr(&x.Where)
		for i := range x.GroupBy {
			expr(&x.GroupBy[i])
		}
		expr(&x.Having)
		expr(&x.Qualify)
	case *SetOpNode:
		node(x.Left)
		node(x.Right)
	case *RecursiveCTENode:
		node(x.Left)
		node(x.Right)
		for i := range x.KeyTargets {
			expr(&x.KeyTargets[i])
		}
	}
}

// statement visits the query node of a statement.
func statement(s *SelectStatement, node func(Node)) {
	if s != nil && s.Node != nil {
		node(s.Node)
	}
}
