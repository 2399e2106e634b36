package parsetree

import (
	"fmt"
	"slices"
	"strconv"
)

// Decode reads the JSON that DuckDB's json_serialize_sql returns. It is
// strict: a field the model does not know, a missing field, an unknown
// class, type or enumeration value, or a value of the wrong JSON type is a
// *PathError naming where in the document it is. A document that reports
// DuckDB's own error decodes without error, with Document.Error set.
func Decode(data []byte) (*Document, error) {
	v, err := parseJSON(data)
	if err != nil {
		return nil, fmt.Errorf("decode parse tree: %w", err)
	}
	d := &decoder{}
	doc := d.document(v)
	if d.err != nil {
		return nil, d.err
	}
	return doc, nil
}

// Select returns the one statement of a document, or its error.
func (doc *Document) Select() (*SelectStatement, error) {
	if doc.Error != nil {
		return nil, doc.Error
	}
	if len(doc.Statements) != 1 {
		return nil, fmt.Errorf("parse tree: want one SELECT statement, got %d statements", len(doc.Statements))
	}
	return doc.Statements[0], nil
}

func (d *decoder) document(v any) *Document {
	o := d.object("", v)
	doc := &Document{}
	if o.boolean("error") {
		doc.Error = &SQLError{Type: o.str("error_type"), Message: o.str("error_message")}
		for _, k := range o.rest() {
			if doc.Error.Extra == nil {
				doc.Error.Extra = map[string]string{}
			}
			doc.Error.Extra[k] = o.str(k)
		}
		o.end() // a missing error_type or error_message
		return doc
	}
	o.list("statements", func(path string, v any) {
		doc.Statements = append(doc.Statements, d.statement(path, v))
	})
	o.end()
	return doc
}

func (d *decoder) statement(path string, v any) *SelectStatement {
	if v == absent {
		return nil
	}
	o := d.object(path, v)
	s := &SelectStatement{Node: d.queryNode(o.at("node"), o.get("node"))}
	o.list("named_param_map", func(path string, v any) {
		p := d.object(path, v)
		s.NamedParams = append(s.NamedParams, NamedParam{Name: p.str("key"), Index: p.u64("value")})
		p.end()
	})
	o.end()
	return s
}

// decoder keeps the first error of a decoding; once it is set, every read
// returns zero values.
type decoder struct {
	err *PathError
}

func (d *decoder) fail(path string, kind error, format string, args ...any) {
	if d.err == nil {
		d.err = &PathError{Path: path, Msg: fmt.Sprintf(format, args...), Err: kind}
	}
}

// object is a JSON object being decoded. It remembers which fields were read
// and the first that was missing, so that end can report a renamed field as
// both: the name it does not know and the name it missed. A nil *object
// stands for an absent one: its reads return zero values.
type object struct {
	d       *decoder
	path    string
	m       map[string]any
	used    []string
	missing string
}

// absent is what get returns for a missing field; readers give zero values
// for it and leave the error to the object's end.
var absent any = absentField{}

type absentField struct{}

// object starts decoding v, which must be an object; absent gives nil.
func (d *decoder) object(path string, v any) *object {
	if v == absent {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok && d.err == nil {
		d.fail(path, ErrInvalid, "want an object, got %s", jsonKind(v))
	}
	return &object{d: d, path: path, m: m}
}

// at is the path of field key.
func (o *object) at(key string) string {
	if o == nil || o.path == "" {
		return key
	}
	return o.path + "." + key
}

// get returns field key, or absent.
func (o *object) get(key string) any {
	if o == nil || o.d.err != nil {
		return absent
	}
	v, ok := o.m[key]
	if !ok {
		if o.missing == "" {
			o.missing = key
		}
		return absent
	}
	o.used = append(o.used, key)
	return v
}

// rest returns the fields not read yet, sorted.
func (o *object) rest() []string {
	var out []string
	for k := range o.m {
		if !slices.Contains(o.used, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// end reports the first field of o that it does not know, and the first
// that was missing.
func (o *object) end() {
	if o == nil || o.d.err != nil {
		return
	}
	rest := o.rest()
	switch {
	case len(rest) > 0 && o.missing != "":
		o.d.fail(o.path, ErrUnknownField, "unknown field %q, missing field %q", rest[0], o.missing)
	case len(rest) > 0:
		o.d.fail(o.path, ErrUnknownField, "unknown field %q", rest[0])
	case o.missing != "":
		o.d.fail(o.path, ErrMissingField, "missing field %q", o.missing)
	}
}

func (o *object) str(key string) string {
	v := o.get(key)
	s, ok := v.(string)
	if !ok && v != absent {
		o.d.fail(o.at(key), ErrInvalid, "want a string, got %s", jsonKind(v))
	}
	return s
}

func (o *object) boolean(key string) bool {
	v := o.get(key)
	b, ok := v.(bool)
	if !ok && v != absent {
		o.d.fail(o.at(key), ErrInvalid, "want a boolean, got %s", jsonKind(v))
	}
	return b
}

func (o *object) u64(key string) uint64 {
	v := o.get(key)
	n, err := strconv.ParseUint(numberText(v), 10, 64)
	if err != nil && v != absent {
		o.d.fail(o.at(key), ErrInvalid, "want an unsigned integer, got %s", jsonText(v))
	}
	return n
}

func (o *object) i64(key string) int64 {
	v := o.get(key)
	n, err := strconv.ParseInt(numberText(v), 10, 64)
	if err != nil && v != absent {
		o.d.fail(o.at(key), ErrInvalid, "want an integer, got %s", jsonText(v))
	}
	return n
}

// intN reads an integer field that must fit a signed integer of bits.
func (o *object) intN(key string, bits int) int64 {
	n := o.i64(key)
	if !fitsInt(n, bits) {
		o.d.fail(o.at(key), ErrInvalid, "%d is out of range of a %d-bit integer", n, bits)
	}
	return n
}

// uintN reads an integer field that must fit an unsigned integer of bits.
func (o *object) uintN(key string, bits int) uint64 {
	n := o.u64(key)
	if !fitsUint(n, bits) {
		o.d.fail(o.at(key), ErrInvalid, "%d is out of range of a %d-bit unsigned integer", n, bits)
	}
	return n
}

// list calls fn with the path and value of each element of list field key.
func (o *object) list(key string, fn func(path string, v any)) {
	if o != nil {
		o.d.list(o.at(key), o.get(key), fn)
	}
}

// list calls fn with the path and value of each element of list v.
func (d *decoder) list(path string, v any, fn func(path string, v any)) {
	l, ok := v.([]any)
	if !ok {
		if v != absent {
			d.fail(path, ErrInvalid, "want a list, got %s", jsonKind(v))
		}
		return
	}
	for i, e := range l {
		if d.err != nil {
			return
		}
		fn(path+"["+strconv.Itoa(i)+"]", e)
	}
}

func (o *object) strs(key string) []string {
	var out []string
	o.list(key, func(path string, v any) {
		s, ok := v.(string)
		if !ok {
			o.d.fail(path, ErrInvalid, "want a string, got %s", jsonKind(v))
		}
		out = append(out, s)
	})
	return out
}

// enum reads a field whose value must be one of known; what names the
// enumeration in the error.
func (o *object) enum(key string, known map[string]bool, what string) string {
	if o == nil {
		return ""
	}
	v := o.get(key)
	s, ok := v.(string)
	if !ok && v != absent {
		o.d.fail(o.at(key), ErrInvalid, "want a string, got %s", jsonKind(v))
	}
	if ok && !known[s] {
		o.d.fail(o.at(key), ErrUnknownKind, "unknown %s %q", what, s)
	}
	return s
}

// unknownKind reports the value of discriminator field key (a class or a
// type) that the decoder does not know, or that the field is missing.
func (o *object) unknownKind(key, what, val string) {
	if o.missing == key {
		o.d.fail(o.path, ErrMissingField, "missing field %q", key)
		return
	}
	o.d.fail(o.at(key), ErrUnknownKind, "unknown %s %q", what, val)
}
