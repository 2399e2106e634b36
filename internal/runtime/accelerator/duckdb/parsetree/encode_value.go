package parsetree

// val writes a Value.
func (w *writer) val(v Value) {
	w.begin('{')
	w.key("type")
	w.logicalType(v.Type)
	w.key("is_null")
	w.boolean(v.IsNull)
	if !v.IsNull {
		w.key("value")
		w.valueData(v)
	}
	w.end('}')
}

// valueData writes v.Data as DuckDB writes a value of v.Type.
func (w *writer) valueData(v Value) {
	kind, bits := physicalOf(v.Type)
	ok := false
	switch x := v.Data.(type) {
	case bool:
		ok = kind == physBool
		w.boolean(x)
	case int64:
		ok = kind == physInt && fitsInt(x, bits)
		w.int(x)
	case uint64:
		ok = kind == physUint && fitsUint(x, bits)
		w.uint(x)
	case Int128:
		ok = kind == physInt128
		w.pair("upper", "lower", func() { w.int(x.Upper) }, func() { w.uint(x.Lower) })
	case Uint128:
		ok = kind == physUint128
		w.pair("upper", "lower", func() { w.uint(x.Upper) }, func() { w.uint(x.Lower) })
	case float64:
		ok = kind == physFloat
		w.value()
		w.buf = appendFloat(w.buf, x)
	case string:
		ok = kind == physString
		w.str(x)
	case Interval:
		ok = kind == physInterval
		w.interval(x)
	case []Value:
		ok = kind == physNested
		w.begin('{')
		w.key("children")
		w.begin('[')
		for _, c := range x {
			w.val(c)
		}
		w.end(']')
		w.end('}')
	default:
		w.null()
	}
	if !ok {
		w.fail(ErrInvalid, "a %s value cannot hold %T %v", v.Type.ID, v.Data, v.Data)
	}
}

// pair writes an object of two fields.
func (w *writer) pair(k1, k2 string, v1, v2 func()) {
	w.begin('{')
	w.key(k1)
	v1()
	w.key(k2)
	v2()
	w.end('}')
}

func (w *writer) interval(x Interval) {
	w.begin('{')
	w.key("months")
	w.int(int64(x.Months))
	w.key("days")
	w.int(int64(x.Days))
	w.key("micros")
	w.int(x.Micros)
	w.end('}')
}

func (w *writer) logicalType(t LogicalType) {
	w.begin('{')
	w.key("id")
	w.enum(string(t.ID), typeIDs, "type id")
	w.key("type_info")
	w.typeInfo(t.Info)
	w.end('}')
}

func (w *writer) typeInfo(info TypeInfo) {
	if info == nil {
		w.null()
		return
	}
	w.begin('{')
	w.key("type")
	typ := typeInfoType(info)
	if typ == "" {
		w.fail(ErrUnknownKind, "unknown type info %T", info)
	}
	w.str(typ)
	w.key("alias")
	w.str(info.Base().Alias)
	w.key("extension_info")
	w.null()
	switch x := info.(type) {
	case *DecimalInfo:
		w.key("width")
		w.uint(uint64(x.Width))
		w.key("scale")
		w.uint(uint64(x.Scale))
	case *ListInfo:
		w.key("child_type")
		w.logicalType(x.Child)
	case *StructInfo:
		w.key("child_types")
		w.begin('[')
		for _, f := range x.Fields {
			w.begin('{')
			w.key("first")
			w.str(f.Name)
			w.key("second")
			w.logicalType(f.Type)
			w.end('}')
		}
		w.end(']')
	case *ArrayInfo:
		w.key("child_type")
		w.logicalType(x.Child)
		w.key("size")
		w.uint(uint64(x.Size))
	case *UnboundInfo:
		w.unboundInfo(x)
	}
	w.end('}')
}

func (w *writer) unboundInfo(x *UnboundInfo) {
	for _, f := range [...][2]string{{"name", x.Name}, {"catalog", x.Catalog}, {"schema", x.Schema}} {
		w.key(f[0])
		w.str(f[1])
	}
	w.key("user_type_modifiers")
	w.begin('[')
	for _, m := range x.Modifiers {
		w.val(m)
	}
	w.end(']')
}

func typeInfoType(info TypeInfo) string {
	switch info.(type) {
	case *DecimalInfo:
		return "DECIMAL_TYPE_INFO"
	case *ListInfo:
		return "LIST_TYPE_INFO"
	case *StructInfo:
		return "STRUCT_TYPE_INFO"
	case *ArrayInfo:
		return "ARRAY_TYPE_INFO"
	case *UnboundInfo:
		return "UNBOUND_TYPE_INFO"
	case *GenericInfo:
		return "GENERIC_TYPE_INFO"
	}
	return ""
}
