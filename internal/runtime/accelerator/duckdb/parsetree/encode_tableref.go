package parsetree

// tableRefTypes is the serialized type of each table reference.
func tableRefType(r TableRef) string {
	switch r.(type) {
	case *BaseTable:
		return "BASE_TABLE"
	case *Join:
		return "JOIN"
	case *SubqueryRef:
		return "SUBQUERY"
	case *TableFunction:
		return "TABLE_FUNCTION"
	case *EmptyRef:
		return "EMPTY"
	case *ValuesRef:
		return "EXPRESSION_LIST"
	case *PivotRef:
		return "PIVOT"
	case *ShowRef:
		return "SHOW_REF"
	}
	return ""
}

// tableRef writes a table reference, which may not be nil.
func (w *writer) tableRef(r TableRef) {
	typ := ""
	if r != nil {
		typ = tableRefType(r)
	}
	if r == nil {
		w.null()
		w.fail(ErrInvalid, "want a table reference, got nil")
		return
	}
	if typ == "" {
		w.null()
		w.fail(ErrUnknownKind, "unknown table reference %T", r)
		return
	}
	w.begin('{')
	b := r.Base()
	w.key("type")
	w.str(typ)
	w.key("alias")
	w.str(b.Alias)
	w.key("sample")
	w.sample(b.Sample)
	w.key("query_location")
	w.location(b.Location)
	switch x := r.(type) {
	case *BaseTable:
		w.baseTable(x)
	case *Join:
		w.join(x)
	case *SubqueryRef:
		w.key("subquery")
		w.statement(x.Query)
		w.key("column_name_alias")
		w.strs(x.ColumnAliases)
	case *TableFunction:
		w.field("function", x.Function)
		w.key("column_name_alias")
		w.strs(x.ColumnAliases)
		w.key("with_ordinality")
		w.enum(string(x.Ordinality), ordinalities, "ordinality")
	case *ValuesRef:
		w.valuesRef(x)
	case *PivotRef:
		w.pivotRef(x)
	case *ShowRef:
		w.showRef(x)
	}
	w.end('}')
}

func (w *writer) baseTable(x *BaseTable) {
	w.key("schema_name")
	w.str(x.Schema)
	w.key("table_name")
	w.str(x.Table)
	w.key("column_name_alias")
	w.strs(x.ColumnAliases)
	w.key("catalog_name")
	w.str(x.Catalog)
	w.key("at_clause")
	if x.At == nil {
		w.null()
		return
	}
	w.begin('{')
	w.key("unit")
	w.str(x.At.Unit)
	w.field("expr", x.At.Expr)
	w.end('}')
}

func (w *writer) join(x *Join) {
	w.key("left")
	w.tableRef(x.Left)
	w.key("right")
	w.tableRef(x.Right)
	w.key("condition")
	w.expr(x.Condition)
	w.key("join_type")
	w.enum(string(x.Type), joinTypes, "join type")
	w.key("ref_type")
	w.enum(string(x.Ref), joinRefTypes, "join reference type")
	w.key("using_columns")
	w.strs(x.Using)
	w.key("delim_flipped")
	w.boolean(x.DelimFlipped)
	w.key("duplicate_eliminated_columns")
	w.exprs(x.DuplicateEliminated)
}

func (w *writer) valuesRef(x *ValuesRef) {
	w.key("expected_names")
	w.strs(x.Names)
	w.key("expected_types")
	w.begin('[')
	for _, t := range x.Types {
		w.logicalType(t)
	}
	w.end(']')
	w.key("values")
	w.begin('[')
	for _, row := range x.Values {
		w.exprs(row)
	}
	w.end(']')
}

func (w *writer) pivotRef(x *PivotRef) {
	w.key("source")
	w.tableRef(x.Source)
	w.key("aggregates")
	w.exprs(x.Aggregates)
	w.key("unpivot_names")
	w.strs(x.UnpivotNames)
	w.key("pivots")
	w.begin('[')
	for _, p := range x.Pivots {
		w.begin('{')
		w.key("pivot_expressions")
		w.exprs(p.Exprs)
		w.key("unpivot_names")
		w.strs(p.UnpivotNames)
		w.key("entries")
		w.begin('[')
		for _, e := range p.Entries {
			w.begin('{')
			w.key("values")
			w.begin('[')
			for _, v := range e.Values {
				w.val(v)
			}
			w.end(']')
			w.key("star_expr")
			w.expr(e.Star)
			w.key("alias")
			w.str(e.Alias)
			w.end('}')
		}
		w.end(']')
		w.key("pivot_enum")
		w.str(p.Enum)
		w.end('}')
	}
	w.end(']')
	w.key("groups")
	w.strs(x.Groups)
	w.key("column_name_alias")
	w.strs(x.ColumnAliases)
	w.key("include_nulls")
	w.boolean(x.IncludeNulls)
}

func (w *writer) showRef(x *ShowRef) {
	w.key("table_name")
	w.str(x.Table)
	w.key("query")
	if x.Query == nil {
		w.null()
	} else {
		w.queryNode(x.Query)
	}
	w.key("show_type")
	w.enum(string(x.Type), showTypes, "show type")
	w.key("catalog_name")
	w.str(x.Catalog)
	w.key("schema_name")
	w.str(x.Schema)
}
