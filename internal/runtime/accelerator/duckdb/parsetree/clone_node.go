package parsetree

import "slices"

func cloneQuery(q QueryNode) QueryNode {
	switch x := q.(type) {
	case *SelectNode:
		c := *x
		c.QueryBase = cloneQueryBase(x.QueryBase)
		c.List, c.From, c.Where, c.GroupBy = cloneExprs(x.List), Clone(x.From), Clone(x.Where), cloneExprs(x.GroupBy)
		if x.GroupingSets != nil {
			c.GroupingSets = make([][]uint64, len(x.GroupingSets))
			for i, s := range x.GroupingSets {
				c.GroupingSets[i] = slices.Clone(s)
			}
		}
		c.Having, c.Sample, c.Qualify = Clone(x.Having), cloneSample(x.Sample), Clone(x.Qualify)
		return &c
	case *SetOpNode:
		c := *x
		c.QueryBase = cloneQueryBase(x.QueryBase)
		c.Left, c.Right = Clone(x.Left), Clone(x.Right)
		return &c
	case *RecursiveCTENode:
		c := *x
		c.QueryBase = cloneQueryBase(x.QueryBase)
		c.Left, c.Right = Clone(x.Left), Clone(x.Right)
		c.Aliases, c.KeyTargets = slices.Clone(x.Aliases), cloneExprs(x.KeyTargets)
		return &c
	}
	panic("parsetree: clone: unknown query node")
}

func cloneQueryBase(b QueryBase) QueryBase {
	var c QueryBase
	if b.Modifiers != nil {
		c.Modifiers = make([]Modifier, len(b.Modifiers))
		for i, m := range b.Modifiers {
			c.Modifiers[i] = Clone(m)
		}
	}
	if b.CTEs != nil {
		c.CTEs = make([]CTE, len(b.CTEs))
		for i, e := range b.CTEs {
			c.CTEs[i] = CTE{Name: e.Name, Aliases: slices.Clone(e.Aliases), Query: CloneStatement(e.Query),
				Materialized: e.Materialized, KeyTargets: cloneExprs(e.KeyTargets)}
		}
	}
	return c
}

func cloneTableRef(r TableRef) TableRef {
	switch x := r.(type) {
	case *BaseTable:
		c := *x
		c.TableRefBase = cloneRefBase(x.TableRefBase)
		c.ColumnAliases = slices.Clone(x.ColumnAliases)
		if x.At != nil {
			c.At = &AtClause{Unit: x.At.Unit, Expr: Clone(x.At.Expr)}
		}
		return &c
	case *Join:
		c := *x
		c.TableRefBase = cloneRefBase(x.TableRefBase)
		c.Left, c.Right, c.Condition = Clone(x.Left), Clone(x.Right), Clone(x.Condition)
		c.Using, c.DuplicateEliminated = slices.Clone(x.Using), cloneExprs(x.DuplicateEliminated)
		return &c
	case *SubqueryRef:
		c := *x
		c.TableRefBase = cloneRefBase(x.TableRefBase)
		c.Query, c.ColumnAliases = CloneStatement(x.Query), slices.Clone(x.ColumnAliases)
		return &c
	case *TableFunction:
		c := *x
		c.TableRefBase = cloneRefBase(x.TableRefBase)
		c.Function, c.ColumnAliases = Clone(x.Function), slices.Clone(x.ColumnAliases)
		return &c
	case *EmptyRef:
		return &EmptyRef{TableRefBase: cloneRefBase(x.TableRefBase)}
	case *ValuesRef:
		return cloneValuesRef(x)
	case *PivotRef:
		return clonePivotRef(x)
	case *ShowRef:
		c := *x
		c.TableRefBase = cloneRefBase(x.TableRefBase)
		c.Query = Clone(x.Query)
		return &c
	}
	panic("parsetree: clone: unknown table reference")
}

func cloneRefBase(b TableRefBase) TableRefBase {
	b.Sample = cloneSample(b.Sample)
	return b
}

func cloneSample(s *Sample) *Sample {
	if s == nil {
		return nil
	}
	c := *s
	c.Size = cloneValue(s.Size)
	return &c
}

func cloneValuesRef(x *ValuesRef) *ValuesRef {
	c := *x
	c.TableRefBase = cloneRefBase(x.TableRefBase)
	c.Names = slices.Clone(x.Names)
	if x.Types != nil {
		c.Types = make([]LogicalType, len(x.Types))
		for i, t := range x.Types {
			c.Types[i] = cloneType(t)
		}
	}
	if x.Values != nil {
		c.Values = make([][]Expr, len(x.Values))
		for i, row := range x.Values {
			c.Values[i] = cloneExprs(row)
		}
	}
	return &c
}

func clonePivotRef(x *PivotRef) *PivotRef {
	c := *x
	c.TableRefBase = cloneRefBase(x.TableRefBase)
	c.Source, c.Aggregates, c.UnpivotNames = Clone(x.Source), cloneExprs(x.Aggregates), slices.Clone(x.UnpivotNames)
	if x.Pivots != nil {
		c.Pivots = make([]PivotColumn, len(x.Pivots))
		for i, p := range x.Pivots {
			pc := PivotColumn{Exprs: cloneExprs(p.Exprs), UnpivotNames: slices.Clone(p.UnpivotNames), Enum: p.Enum}
			if p.Entries != nil {
				pc.Entries = make([]PivotEntry, len(p.Entries))
				for j, e := range p.Entries {
					pc.Entries[j] = PivotEntry{Values: cloneValues(e.Values), Star: Clone(e.Star), Alias: e.Alias}
				}
			}
			c.Pivots[i] = pc
		}
	}
	c.Groups, c.ColumnAliases = slices.Clone(x.Groups), slices.Clone(x.ColumnAliases)
	return &c
}

func cloneValue(v Value) Value {
	v.Type = cloneType(v.Type)
	if children, ok := v.Data.([]Value); ok {
		v.Data = cloneValues(children)
	}
	return v
}

func cloneValues(l []Value) []Value {
	if l == nil {
		return nil
	}
	out := make([]Value, len(l))
	for i, v := range l {
		out[i] = cloneValue(v)
	}
	return out
}

func cloneType(t LogicalType) LogicalType {
	switch x := t.Info.(type) {
	case *DecimalInfo:
		c := *x
		t.Info = &c
	case *ListInfo:
		t.Info = &ListInfo{TypeInfoBase: x.TypeInfoBase, Child: cloneType(x.Child)}
	case *StructInfo:
		c := &StructInfo{TypeInfoBase: x.TypeInfoBase, Fields: slices.Clone(x.Fields)}
		for i := range c.Fields {
			c.Fields[i].Type = cloneType(x.Fields[i].Type)
		}
		t.Info = c
	case *ArrayInfo:
		t.Info = &ArrayInfo{TypeInfoBase: x.TypeInfoBase, Child: cloneType(x.Child), Size: x.Size}
	case *UnboundInfo:
		c := *x
		c.Modifiers = cloneValues(x.Modifiers)
		t.Info = &c
	case *GenericInfo:
		c := *x
		t.Info = &c
	}
	return t
}
