package parsetree

import "slices"

// Clone returns a deep copy of n: changing one tree never changes the
// other. A nil n gives nil.
func Clone[N Node](n N) N {
	c, _ := cloneNode(n).(N)
	return c
}

// CloneStatement returns a deep copy of s.
func CloneStatement(s *SelectStatement) *SelectStatement {
	if s == nil {
		return nil
	}
	return &SelectStatement{Node: Clone(s.Node), NamedParams: slices.Clone(s.NamedParams)}
}

func cloneNode(n Node) Node {
	switch x := n.(type) {
	case nil:
		return nil
	case Expr:
		return cloneExpr(x)
	case TableRef:
		return cloneTableRef(x)
	case QueryNode:
		return cloneQuery(x)
	case Modifier:
		return cloneModifier(x)
	}
	panic("parsetree: clone: unknown node")
}

// cloneExprs clones a list of expressions, keeping nil.
func cloneExprs(l []Expr) []Expr {
	if l == nil {
		return nil
	}
	out := make([]Expr, len(l))
	for i, e := range l {
		out[i] = Clone(e)
	}
	return out
}

func cloneOrders(l []OrderBy) []OrderBy {
	if l == nil {
		return nil
	}
	out := make([]OrderBy, len(l))
	for i, o := range l {
		out[i] = OrderBy{Type: o.Type, Nulls: o.Nulls, Expr: Clone(o.Expr)}
	}
	return out
}

func cloneExpr(e Expr) Expr {
	switch x := e.(type) {
	case *ColumnRef:
		c := *x
		c.Names = slices.Clone(x.Names)
		return &c
	case *Constant:
		c := *x
		c.Value = cloneValue(x.Value)
		return &c
	case *Function:
		c := *x
		c.Args, c.Filter, c.OrderBy = cloneExprs(x.Args), Clone(x.Filter), cloneOrders(x.OrderBy)
		return &c
	case *Comparison:
		c := *x
		c.Left, c.Right = Clone(x.Left), Clone(x.Right)
		return &c
	case *Conjunction:
		c := *x
		c.Children = cloneExprs(x.Children)
		return &c
	case *Operator:
		c := *x
		c.Children = cloneExprs(x.Children)
		return &c
	case *Cast:
		c := *x
		c.Child, c.Type = Clone(x.Child), cloneType(x.Type)
		return &c
	case *Case:
		c := *x
		c.Checks = slices.Clone(x.Checks)
		for i := range c.Checks {
			c.Checks[i] = CaseCheck{When: Clone(x.Checks[i].When), Then: Clone(x.Checks[i].Then)}
		}
		c.Else = Clone(x.Else)
		return &c
	case *Between:
		c := *x
		c.Input, c.Lower, c.Upper = Clone(x.Input), Clone(x.Lower), Clone(x.Upper)
		return &c
	case *Star:
		return cloneStar(x)
	case *Subquery:
		c := *x
		c.Query, c.Child = CloneStatement(x.Query), Clone(x.Child)
		return &c
	case *Window:
		return cloneWindow(x)
	case *Lambda:
		c := *x
		c.Params, c.Body = Clone(x.Params), Clone(x.Body)
		return &c
	case *Parameter:
		c := *x
		return &c
	case *PositionalRef:
		c := *x
		return &c
	case *Collate:
		c := *x
		c.Child = Clone(x.Child)
		return &c
	case *Default:
		c := *x
		return &c
	}
	panic("parsetree: clone: unknown expression")
}

func cloneStar(x *Star) *Star {
	c := *x
	c.Exclude = slices.Clone(x.Exclude)
	c.Replace = slices.Clone(x.Replace)
	for i := range c.Replace {
		c.Replace[i].Expr = Clone(x.Replace[i].Expr)
	}
	c.Expr = Clone(x.Expr)
	c.QualifiedExclude = slices.Clone(x.QualifiedExclude)
	c.Rename = slices.Clone(x.Rename)
	return &c
}

func cloneWindow(x *Window) *Window {
	c := *x
	c.Args, c.Partitions, c.Orders = cloneExprs(x.Args), cloneExprs(x.Partitions), cloneOrders(x.Orders)
	c.StartExpr, c.EndExpr, c.Offset, c.Default = Clone(x.StartExpr), Clone(x.EndExpr), Clone(x.Offset), Clone(x.Default)
	c.Filter, c.ArgOrders = Clone(x.Filter), cloneOrders(x.ArgOrders)
	return &c
}

func cloneModifier(m Modifier) Modifier {
	switch x := m.(type) {
	case *OrderModifier:
		return &OrderModifier{Orders: cloneOrders(x.Orders)}
	case *LimitModifier:
		return &LimitModifier{Limit: Clone(x.Limit), Offset: Clone(x.Offset)}
	case *LimitPercentModifier:
		return &LimitPercentModifier{Limit: Clone(x.Limit), Offset: Clone(x.Offset)}
	case *DistinctModifier:
		return &DistinctModifier{On: cloneExprs(x.On)}
	}
	panic("parsetree: clone: unknown modifier")
}
