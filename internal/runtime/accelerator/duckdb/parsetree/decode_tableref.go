package parsetree

// tableRef reads a table reference, which may not be null.
func (d *decoder) tableRef(path string, v any) TableRef {
	if v == absent {
		return nil
	}
	if v == nil && d.err == nil {
		d.fail(path, ErrInvalid, "want a table reference, got null")
	}
	if d.err != nil {
		return nil
	}
	o := d.object(path, v)
	typ := o.str("type")
	b := TableRefBase{Alias: o.str("alias"), Sample: d.sample(o.at("sample"), o.get("sample")),
		Location: Location(o.u64("query_location"))}
	var r TableRef
	switch typ {
	case "BASE_TABLE":
		r = &BaseTable{TableRefBase: b, Schema: o.str("schema_name"), Table: o.str("table_name"),
			ColumnAliases: o.strs("column_name_alias"), Catalog: o.str("catalog_name"), At: d.atClause(o)}
	case "JOIN":
		r = &Join{TableRefBase: b, Left: d.tableRef(o.at("left"), o.get("left")), Right: d.tableRef(o.at("right"), o.get("right")),
			Condition: o.expr("condition"), Type: JoinType(o.enum("join_type", joinTypes, "join type")),
			Ref: JoinRefType(o.enum("ref_type", joinRefTypes, "join reference type")), Using: o.strs("using_columns"),
			DelimFlipped: o.boolean("delim_flipped"), DuplicateEliminated: o.exprs("duplicate_eliminated_columns")}
	case "SUBQUERY":
		r = &SubqueryRef{TableRefBase: b, Query: d.statement(o.at("subquery"), o.get("subquery")),
			ColumnAliases: o.strs("column_name_alias")}
	case "TABLE_FUNCTION":
		r = &TableFunction{TableRefBase: b, Function: o.reqExpr("function"), ColumnAliases: o.strs("column_name_alias"),
			Ordinality: Ordinality(o.enum("with_ordinality", ordinalities, "ordinality"))}
	case "EMPTY":
		r = &EmptyRef{TableRefBase: b}
	case "EXPRESSION_LIST":
		r = d.valuesRef(o, b)
	case "PIVOT":
		r = d.pivotRef(o, b)
	case "SHOW_REF":
		s := &ShowRef{TableRefBase: b, Table: o.str("table_name")}
		if q := o.get("query"); q != nil && q != absent {
			s.Query = d.queryNode(o.at("query"), q)
		}
		s.Type = ShowType(o.enum("show_type", showTypes, "show type"))
		s.Catalog, s.Schema = o.str("catalog_name"), o.str("schema_name")
		r = s
	default:
		o.unknownKind("type", "table reference type", typ)
	}
	o.end()
	return r
}

// atClause reads a base table's AT clause; null is nil.
func (d *decoder) atClause(o *object) *AtClause {
	v := o.get("at_clause")
	if v == nil || v == absent || d.err != nil {
		return nil
	}
	a := d.object(o.at("at_clause"), v)
	c := &AtClause{Unit: a.str("unit"), Expr: a.reqExpr("expr")}
	a.end()
	return c
}

func (d *decoder) valuesRef(o *object, b TableRefBase) *ValuesRef {
	r := &ValuesRef{TableRefBase: b, Names: o.strs("expected_names")}
	o.list("expected_types", func(path string, v any) { r.Types = append(r.Types, d.logicalType(path, v)) })
	o.list("values", func(path string, v any) {
		var exprs []Expr
		d.list(path, v, func(path string, v any) {
			if v == nil {
				d.fail(path, ErrInvalid, "want an expression, got null")
			}
			exprs = append(exprs, d.expr(path, v))
		})
		r.Values = append(r.Values, exprs)
	})
	return r
}

func (d *decoder) pivotRef(o *object, b TableRefBase) *PivotRef {
	r := &PivotRef{TableRefBase: b, Source: d.tableRef(o.at("source"), o.get("source")), Aggregates: o.exprs("aggregates"),
		UnpivotNames: o.strs("unpivot_names")}
	o.list("pivots", func(path string, v any) {
		p := d.object(path, v)
		c := PivotColumn{Exprs: p.exprs("pivot_expressions"), UnpivotNames: p.strs("unpivot_names")}
		p.list("entries", func(path string, v any) {
			e := d.object(path, v)
			entry := PivotEntry{}
			e.list("values", func(path string, v any) { entry.Values = append(entry.Values, d.value(path, v)) })
			entry.Star, entry.Alias = e.expr("star_expr"), e.str("alias")
			e.end()
			c.Entries = append(c.Entries, entry)
		})
		c.Enum = p.str("pivot_enum")
		p.end()
		r.Pivots = append(r.Pivots, c)
	})
	r.Groups, r.ColumnAliases, r.IncludeNulls = o.strs("groups"), o.strs("column_name_alias"), o.boolean("include_nulls")
	return r
}
