package parsetree

// value reads a Value.
func (d *decoder) value(path string, v any) Value {
	if v == absent {
		return Value{}
	}
	o := d.object(path, v)
	val := Value{Type: d.logicalType(o.at("type"), o.get("type")), IsNull: o.boolean("is_null")}
	if !val.IsNull && o.missing == "" && d.err == nil {
		val.Data = d.valueData(o, val.Type)
	}
	o.end()
	return val
}

// valueData reads field "value" of o as DuckDB writes a value of type t.
func (d *decoder) valueData(o *object, t LogicalType) any {
	kind, bits := physicalOf(t)
	switch kind {
	case physBool:
		return o.boolean("value")
	case physInt:
		return o.intN("value", bits)
	case physUint:
		return o.uintN("value", bits)
	case physInt128:
		h := d.object(o.at("value"), o.get("value"))
		n := Int128{Upper: h.i64("upper"), Lower: h.u64("lower")}
		h.end()
		return n
	case physUint128:
		h := d.object(o.at("value"), o.get("value"))
		n := Uint128{Upper: h.u64("upper"), Lower: h.u64("lower")}
		h.end()
		return n
	case physFloat:
		v := o.get("value")
		f, ok := parseFloat(v)
		if !ok && v != absent {
			d.fail(o.at("value"), ErrInvalid, "want a real number, got %s", jsonText(v))
		}
		return f
	case physString:
		return o.str("value")
	case physInterval:
		i := d.object(o.at("value"), o.get("value"))
		n := Interval{Months: int32(i.intN("months", 32)), Days: int32(i.intN("days", 32)), Micros: i.i64("micros")}
		i.end()
		return n
	case physNested:
		c := d.object(o.at("value"), o.get("value"))
		children := []Value{}
		c.list("children", func(path string, v any) { children = append(children, d.value(path, v)) })
		c.end()
		return children
	}
	d.fail(o.at("value"), ErrUnknownKind, "a value of type %s is not modelled", t.ID)
	return nil
}

// logicalType reads a LogicalType.
func (d *decoder) logicalType(path string, v any) LogicalType {
	if v == absent {
		return LogicalType{}
	}
	o := d.object(path, v)
	t := LogicalType{ID: TypeID(o.enum("id", typeIDs, "type id"))}
	if info := o.get("type_info"); info != nil && info != absent && d.err == nil {
		t.Info = d.typeInfo(o.at("type_info"), info)
	}
	o.end()
	return t
}

// typeInfo reads a type's parameters.
func (d *decoder) typeInfo(path string, v any) TypeInfo {
	o := d.object(path, v)
	typ := o.str("type")
	b := TypeInfoBase{Alias: o.str("alias")}
	if ext := o.get("extension_info"); ext != nil && ext != absent && d.err == nil {
		d.fail(o.at("extension_info"), ErrUnknownKind, "a type's extension info is not modelled")
	}
	var info TypeInfo
	switch typ {
	case "DECIMAL_TYPE_INFO":
		info = &DecimalInfo{TypeInfoBase: b, Width: uint8(o.uintN("width", 8)), Scale: uint8(o.uintN("scale", 8))}
	case "LIST_TYPE_INFO":
		info = &ListInfo{TypeInfoBase: b, Child: d.logicalType(o.at("child_type"), o.get("child_type"))}
	case "STRUCT_TYPE_INFO":
		s := &StructInfo{TypeInfoBase: b}
		o.list("child_types", func(path string, v any) {
			f := d.object(path, v)
			s.Fields = append(s.Fields, StructField{Name: f.str("first"), Type: d.logicalType(f.at("second"), f.get("second"))})
			f.end()
		})
		info = s
	case "ARRAY_TYPE_INFO":
		info = &ArrayInfo{TypeInfoBase: b, Child: d.logicalType(o.at("child_type"), o.get("child_type")),
			Size: uint32(o.uintN("size", 32))}
	case "UNBOUND_TYPE_INFO":
		u := &UnboundInfo{TypeInfoBase: b, Name: o.str("name"), Catalog: o.str("catalog"), Schema: o.str("schema")}
		o.list("user_type_modifiers", func(path string, v any) { u.Modifiers = append(u.Modifiers, d.value(path, v)) })
		info = u
	case "GENERIC_TYPE_INFO":
		info = &GenericInfo{TypeInfoBase: b}
	default:
		o.unknownKind("type", "type info", typ)
	}
	o.end()
	return info
}
