package parsetree

import "slices"

// expr writes an expression; nil is null.
func (w *writer) expr(e Expr) {
	if e == nil {
		w.null()
		return
	}
	w.begin('{')
	w.exprFields(e)
	w.end('}')
}

// reqExpr writes an expression that may not be nil.
func (w *writer) reqExpr(e Expr) {
	w.expr(e)
	if e == nil {
		w.fail(ErrInvalid, "want an expression, got nil") // after the null: the path names its place
	}
}

func (w *writer) exprs(l []Expr) {
	w.begin('[')
	for _, e := range l {
		w.reqExpr(e)
	}
	w.end(']')
}

// header writes the fields every expression has.
func (w *writer) header(e Expr, class string, typ ExprType) {
	w.key("class")
	w.str(class)
	w.key("type")
	w.enum(string(typ), exprTypes, "expression type")
	alias := e.Base().Alias
	if w.canonical && e == w.bare {
		alias = ""
	}
	w.key("alias")
	w.str(alias)
	w.key("query_location")
	w.location(e.Base().Location)
}

func (w *writer) exprFields(e Expr) {
	switch x := e.(type) {
	case *ColumnRef:
		w.header(e, "COLUMN_REF", "COLUMN_REF")
		w.key("column_names")
		w.strs(x.Names)
	case *Constant:
		w.header(e, "CONSTANT", "VALUE_CONSTANT")
		w.key("value")
		w.val(x.Value)
	case *Function:
		w.function(x)
	case *Comparison:
		w.header(e, "COMPARISON", x.Op)
		w.field("left", x.Left)
		w.field("right", x.Right)
	case *Conjunction:
		w.header(e, "CONJUNCTION", x.Op)
		w.key("children")
		w.exprs(x.Children)
	case *Operator:
		w.header(e, "OPERATOR", x.Op)
		w.key("children")
		w.exprs(x.Children)
	case *Cast:
		w.header(e, "CAST", "OPERATOR_CAST")
		w.field("child", x.Child)
		w.key("cast_type")
		w.logicalType(x.Type)
		w.key("try_cast")
		w.boolean(x.Try)
	case *Case:
		w.caseExpr(x)
	case *Between:
		w.header(e, "BETWEEN", "COMPARE_BETWEEN")
		w.field("input", x.Input)
		w.field("lower", x.Lower)
		w.field("upper", x.Upper)
	case *Star:
		w.star(x)
	case *Subquery:
		w.header(e, "SUBQUERY", "SUBQUERY")
		w.key("subquery_type")
		w.enum(string(x.Kind), subqueryTypes, "subquery type")
		w.key("subquery")
		w.statement(x.Query)
		w.key("child")
		w.expr(x.Child)
		w.key("comparison_type")
		w.enum(string(x.Comparison), exprTypes, "expression type")
	case *Window:
		w.window(x)
	default:
		w.leafExpr(e)
	}
}

// leafExpr writes the expression classes with few fields.
func (w *writer) leafExpr(e Expr) {
	switch x := e.(type) {
	case *Lambda:
		w.header(e, "LAMBDA", "LAMBDA")
		w.field("lhs", x.Params)
		w.field("expr", x.Body)
	case *Parameter:
		w.header(e, "PARAMETER", "VALUE_PARAMETER")
		w.key("identifier")
		w.str(x.Identifier)
	case *PositionalRef:
		w.header(e, "POSITIONAL_REFERENCE", "POSITIONAL_REFERENCE")
		w.key("index")
		w.uint(x.Index)
	case *Collate:
		w.header(e, "COLLATE", "COLLATE")
		w.field("child", x.Child)
		w.key("collation")
		w.str(x.Collation)
	case *Default:
		w.header(e, "DEFAULT", "VALUE_DEFAULT")
	default:
		w.fail(ErrUnknownKind, "unknown expression %T", e)
	}
}

// field writes field k, an expression that may not be nil.
func (w *writer) field(k string, e Expr) {
	w.key(k)
	w.reqExpr(e)
}

func (w *writer) function(x *Function) {
	w.header(x, "FUNCTION", "FUNCTION")
	w.key("function_name")
	w.str(x.Name)
	w.key("schema")
	w.str(x.Schema)
	w.key("children")
	w.exprs(x.Args)
	w.key("filter")
	w.expr(x.Filter)
	w.key("order_bys")
	w.modifier(&OrderModifier{Orders: x.OrderBy})
	for _, f := range []struct {
		k string
		v bool
	}{{"distinct", x.Distinct}, {"is_operator", x.IsOperator}, {"export_state", x.ExportState}} {
		w.key(f.k)
		w.boolean(f.v)
	}
	w.key("catalog")
	w.str(x.Catalog)
}

func (w *writer) caseExpr(x *Case) {
	w.header(x, "CASE", "CASE_EXPR")
	w.key("case_checks")
	w.begin('[')
	for _, c := range x.Checks {
		w.begin('{')
		w.field("when_expr", c.When)
		w.field("then_expr", c.Then)
		w.end('}')
	}
	w.end(']')
	w.field("else_expr", x.Else)
}

func (w *writer) star(x *Star) {
	w.header(x, "STAR", "STAR")
	w.key("relation_name")
	w.str(x.Relation)
	w.key("exclude_list")
	w.strs(x.Exclude)
	w.key("replace_list")
	w.begin('[')
	for _, r := range x.Replace {
		w.begin('{')
		w.key("key")
		w.str(r.Column)
		w.field("value", r.Expr)
		w.end('}')
	}
	w.end(']')
	w.key("columns")
	w.boolean(x.Columns)
	w.key("expr")
	w.expr(x.Expr)
	w.key("qualified_exclude_list")
	w.begin('[')
	for _, c := range x.QualifiedExclude {
		w.qualifiedColumn(c)
	}
	w.end(']')
	w.key("rename_list")
	w.begin('[')
	for _, r := range x.Rename {
		w.begin('{')
		w.key("key")
		w.qualifiedColumn(r.Column)
		w.key("value")
		w.str(r.Name)
		w.end('}')
	}
	w.end(']')
}

func (w *writer) qualifiedColumn(c QualifiedColumn) {
	w.begin('{')
	for _, f := range [...][2]string{{"catalog", c.Catalog}, {"schema", c.Schema}, {"table", c.Table}, {"column", c.Column}} {
		w.key(f[0])
		w.str(f[1])
	}
	w.end('}')
}

func (w *writer) window(x *Window) {
	w.header(x, "WINDOW", x.Op)
	for _, f := range [...][2]string{{"function_name", x.Name}, {"schema", x.Schema}, {"catalog", x.Catalog}} {
		w.key(f[0])
		w.str(f[1])
	}
	w.key("children")
	w.exprs(x.Args)
	w.key("partitions")
	w.exprs(x.Partitions)
	w.key("orders")
	w.orders(x.Orders)
	w.key("start")
	w.enum(string(x.Start), windowBoundaries, "window boundary")
	w.key("end")
	w.enum(string(x.End), windowBoundaries, "window boundary")
	for _, f := range []struct {
		k string
		e Expr
	}{{"start_expr", x.StartExpr}, {"end_expr", x.EndExpr}, {"offset_expr", x.Offset}, {"default_expr", x.Default}} {
		w.key(f.k)
		w.expr(f.e)
	}
	w.key("ignore_nulls")
	w.boolean(x.IgnoreNulls)
	w.key("filter_expr")
	w.expr(x.Filter)
	w.key("exclude_clause")
	w.enum(string(x.Exclude), windowExcludes, "window exclude clause")
	w.key("distinct")
	w.boolean(x.Distinct)
	w.key("arg_orders")
	w.orders(x.ArgOrders)
}

func (w *writer) orders(l []OrderBy) {
	w.begin('[')
	for _, o := range l {
		w.begin('{')
		w.key("type")
		w.enum(string(o.Type), orderTypes, "order type")
		w.key("null_order")
		w.enum(string(o.Nulls), nullOrders, "null order")
		w.field("expression", o.Expr)
		w.end('}')
	}
	w.end(']')
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
