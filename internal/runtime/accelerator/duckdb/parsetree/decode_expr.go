package parsetree

// fixedTypes is the one expression type of each class that has one.
var fixedTypes = map[string]ExprType{
	"COLUMN_REF": "COLUMN_REF", "CONSTANT": "VALUE_CONSTANT", "FUNCTION": "FUNCTION", "CAST": "OPERATOR_CAST",
	"CASE": "CASE_EXPR", "BETWEEN": "COMPARE_BETWEEN", "STAR": "STAR", "SUBQUERY": "SUBQUERY", "LAMBDA": "LAMBDA",
	"PARAMETER": "VALUE_PARAMETER", "POSITIONAL_REFERENCE": "POSITIONAL_REFERENCE", "COLLATE": "COLLATE",
	"DEFAULT": "VALUE_DEFAULT",
}

// expr reads an expression; null is nil.
func (d *decoder) expr(path string, v any) Expr {
	if v == nil || v == absent || d.err != nil {
		return nil
	}
	o := d.object(path, v)
	class := o.str("class")
	typ := ExprType(o.enum("type", exprTypes, "expression type"))
	if want, ok := fixedTypes[class]; ok && typ != want && o.missing == "" && d.err == nil {
		d.fail(o.at("type"), ErrUnknownKind, "expression class %s with type %q, want %q", class, typ, want)
	}
	b := ExprBase{Alias: o.str("alias"), Location: Location(o.u64("query_location"))}
	e := d.exprOf(o, class, typ, b)
	o.end()
	return e
}

// exprOf reads the fields of an expression of class.
func (d *decoder) exprOf(o *object, class string, typ ExprType, b ExprBase) Expr {
	switch class {
	case "COLUMN_REF":
		return &ColumnRef{ExprBase: b, Names: o.strs("column_names")}
	case "CONSTANT":
		return &Constant{ExprBase: b, Value: d.value(o.at("value"), o.get("value"))}
	case "FUNCTION":
		return d.function(o, b)
	case "COMPARISON":
		return &Comparison{ExprBase: b, Op: typ, Left: o.reqExpr("left"), Right: o.reqExpr("right")}
	case "CONJUNCTION":
		return &Conjunction{ExprBase: b, Op: typ, Children: o.exprs("children")}
	case "OPERATOR":
		return &Operator{ExprBase: b, Op: typ, Children: o.exprs("children")}
	case "CAST":
		return &Cast{ExprBase: b, Child: o.reqExpr("child"), Type: d.logicalType(o.at("cast_type"), o.get("cast_type")), Try: o.boolean("try_cast")}
	case "CASE":
		c := &Case{ExprBase: b}
		o.list("case_checks", func(path string, v any) {
			k := d.object(path, v)
			c.Checks = append(c.Checks, CaseCheck{When: k.reqExpr("when_expr"), Then: k.reqExpr("then_expr")})
			k.end()
		})
		c.Else = o.reqExpr("else_expr")
		return c
	case "BETWEEN":
		return &Between{ExprBase: b, Input: o.reqExpr("input"), Lower: o.reqExpr("lower"), Upper: o.reqExpr("upper")}
	case "STAR":
		return d.star(o, b)
	case "SUBQUERY":
		return &Subquery{ExprBase: b, Kind: SubqueryType(o.enum("subquery_type", subqueryTypes, "subquery type")),
			Query: d.statement(o.at("subquery"), o.get("subquery")), Child: o.expr("child"),
			Comparison: ExprType(o.enum("comparison_type", exprTypes, "expression type"))}
	case "WINDOW":
		return d.window(o, typ, b)
	case "LAMBDA":
		return &Lambda{ExprBase: b, Params: o.reqExpr("lhs"), Body: o.reqExpr("expr")}
	case "PARAMETER":
		return &Parameter{ExprBase: b, Identifier: o.str("identifier")}
	case "POSITIONAL_REFERENCE":
		return &PositionalRef{ExprBase: b, Index: o.u64("index")}
	case "COLLATE":
		return &Collate{ExprBase: b, Child: o.reqExpr("child"), Collation: o.str("collation")}
	case "DEFAULT":
		return &Default{ExprBase: b}
	}
	o.unknownKind("class", "expression class", class)
	return nil
}

func (d *decoder) function(o *object, b ExprBase) *Function {
	return &Function{ExprBase: b, Name: o.str("function_name"), Schema: o.str("schema"), Args: o.exprs("children"),
		Filter: o.expr("filter"), OrderBy: d.orderModifier(o.at("order_bys"), o.get("order_bys")),
		Distinct: o.boolean("distinct"), IsOperator: o.boolean("is_operator"), ExportState: o.boolean("export_state"),
		Catalog: o.str("catalog")}
}

func (d *decoder) star(o *object, b ExprBase) *Star {
	s := &Star{ExprBase: b, Relation: o.str("relation_name"), Exclude: o.strs("exclude_list")}
	o.list("replace_list", func(path string, v any) {
		r := d.object(path, v)
		s.Replace = append(s.Replace, StarReplace{Column: r.str("key"), Expr: r.reqExpr("value")})
		r.end()
	})
	s.Columns = o.boolean("columns")
	s.Expr = o.expr("expr")
	o.list("qualified_exclude_list", func(path string, v any) {
		s.QualifiedExclude = append(s.QualifiedExclude, d.qualifiedColumn(path, v))
	})
	o.list("rename_list", func(path string, v any) {
		r := d.object(path, v)
		s.Rename = append(s.Rename, StarRename{Column: d.qualifiedColumn(r.at("key"), r.get("key")), Name: r.str("value")})
		r.end()
	})
	return s
}

func (d *decoder) qualifiedColumn(path string, v any) QualifiedColumn {
	o := d.object(path, v)
	c := QualifiedColumn{Catalog: o.str("catalog"), Schema: o.str("schema"), Table: o.str("table"), Column: o.str("column")}
	o.end()
	return c
}

func (d *decoder) window(o *object, typ ExprType, b ExprBase) *Window {
	return &Window{ExprBase: b, Op: typ, Name: o.str("function_name"), Schema: o.str("schema"), Catalog: o.str("catalog"),
		Args: o.exprs("children"), Partitions: o.exprs("partitions"), Orders: d.orders(o, "orders"),
		Start:     WindowBoundary(o.enum("start", windowBoundaries, "window boundary")),
		End:       WindowBoundary(o.enum("end", windowBoundaries, "window boundary")),
		StartExpr: o.expr("start_expr"), EndExpr: o.expr("end_expr"), Offset: o.expr("offset_expr"),
		Default: o.expr("default_expr"), IgnoreNulls: o.boolean("ignore_nulls"), Filter: o.expr("filter_expr"),
		Exclude:  WindowExclude(o.enum("exclude_clause", windowExcludes, "window exclude clause")),
		Distinct: o.boolean("distinct"), ArgOrders: d.orders(o, "arg_orders")}
}

// orders reads a list of ORDER BY terms.
func (d *decoder) orders(o *object, key string) []OrderBy {
	var out []OrderBy
	o.list(key, func(path string, v any) {
		t := d.object(path, v)
		out = append(out, OrderBy{Type: OrderType(t.enum("type", orderTypes, "order type")),
			Nulls: NullOrder(t.enum("null_order", nullOrders, "null order")), Expr: t.reqExpr("expression")})
		t.end()
	})
	return out
}

// expr reads an expression field that may be null.
func (o *object) expr(key string) Expr {
	return o.d.expr(o.at(key), o.get(key))
}

// reqExpr reads an expression field that may not be null.
func (o *object) reqExpr(key string) Expr {
	v := o.get(key)
	if v == nil && o.d.err == nil {
		o.d.fail(o.at(key), ErrInvalid, "want an expression, got null")
	}
	return o.d.expr(o.at(key), v)
}

// exprs reads a list of expressions, none of them null.
func (o *object) exprs(key string) []Expr {
	var out []Expr
	o.list(key, func(path string, v any) {
		if v == nil {
			o.d.fail(path, ErrInvalid, "want an expression, got null")
		}
		out = append(out, o.d.expr(path, v))
	})
	return out
}
