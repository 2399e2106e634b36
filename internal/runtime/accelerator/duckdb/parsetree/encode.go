package parsetree

import (
	"fmt"
	"strconv"
	"strings"
)

// Encode writes doc as the JSON that DuckDB's json_deserialize_sql reads:
// every field DuckDB 1.5 writes, in its order, so that a decoded document
// encodes to what was decoded. A tree DuckDB could not read (a nil where an
// expression is required, an enumeration value DuckDB does not know, Value
// data of the wrong Go type) is a *PathError.
func Encode(doc *Document) ([]byte, error) {
	w := &writer{}
	w.document(doc)
	if w.err != nil {
		return nil, w.err
	}
	return w.buf, nil
}

func (w *writer) document(doc *Document) {
	w.begin('{')
	if e := doc.Error; e != nil {
		w.key("error")
		w.boolean(true)
		w.key("error_type")
		w.str(e.Type)
		w.key("error_message")
		w.str(e.Message)
		for _, k := range sortedKeys(e.Extra) {
			w.key(k)
			w.str(e.Extra[k])
		}
		w.end('}')
		return
	}
	w.key("error")
	w.boolean(false)
	w.key("statements")
	w.begin('[')
	for _, s := range doc.Statements {
		w.statement(s)
	}
	w.end(']')
	w.end('}')
}

func (w *writer) statement(s *SelectStatement) {
	if s == nil {
		w.null()
		w.fail(ErrInvalid, "want a statement, got nil")
		return
	}
	w.begin('{')
	w.key("node")
	w.queryNode(s.Node)
	w.key("named_param_map")
	w.begin('[')
	for _, p := range s.NamedParams {
		w.begin('{')
		w.key("key")
		w.str(p.Name)
		w.key("value")
		w.uint(p.Index)
		w.end('}')
	}
	w.end(']')
	w.end('}')
}

// writer appends JSON to buf. It tracks where in the document it writes, so
// that an error names the path, and keeps the first error.
type writer struct {
	buf    []byte
	levels []level
	err    *PathError
	// canonical writes every location as 0 and the alias of expression
	// bare as "": what Equal compares.
	canonical bool
	bare      Expr
}

// level is an object or list being written: its current field, or how many
// elements it has.
type level struct {
	list bool
	n    int
	key  string
}

func (w *writer) fail(kind error, format string, args ...any) {
	if w.err == nil {
		w.err = &PathError{Path: w.path(), Msg: fmt.Sprintf(format, args...), Err: kind}
	}
}

func (w *writer) path() string {
	var b strings.Builder
	for _, l := range w.levels {
		switch {
		case l.list && l.n > 0:
			b.WriteString("[" + strconv.Itoa(l.n-1) + "]")
		case !l.list && l.key != "":
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(l.key)
		}
	}
	return b.String()
}

// value starts a value: in a list, after a comma unless it is the first.
func (w *writer) value() {
	if n := len(w.levels); n > 0 && w.levels[n-1].list {
		if w.levels[n-1].n > 0 {
			w.buf = append(w.buf, ',')
		}
		w.levels[n-1].n++
	}
}

// begin starts an object ('{') or a list ('[').
func (w *writer) begin(c byte) {
	w.value()
	w.buf = append(w.buf, c)
	w.levels = append(w.levels, level{list: c == '['})
}

// end ends the object ('}') or list (']') begin started.
func (w *writer) end(c byte) {
	w.buf = append(w.buf, c)
	w.levels = w.levels[:len(w.levels)-1]
}

// key starts field k of the current object.
func (w *writer) key(k string) {
	l := &w.levels[len(w.levels)-1]
	if l.n > 0 {
		w.buf = append(w.buf, ',')
	}
	l.n++
	l.key = k
	w.buf = appendString(w.buf, k)
	w.buf = append(w.buf, ':')
}

func (w *writer) str(s string) {
	w.value()
	w.buf = appendString(w.buf, s)
}

func (w *writer) boolean(b bool) {
	w.value()
	w.buf = strconv.AppendBool(w.buf, b)
}

func (w *writer) uint(n uint64) {
	w.value()
	w.buf = strconv.AppendUint(w.buf, n, 10)
}

func (w *writer) int(n int64) {
	w.value()
	w.buf = strconv.AppendInt(w.buf, n, 10)
}

func (w *writer) null() {
	w.value()
	w.buf = append(w.buf, "null"...)
}

func (w *writer) location(l Location) {
	if w.canonical {
		l = 0
	}
	w.uint(uint64(l))
}

func (w *writer) strs(l []string) {
	w.begin('[')
	for _, s := range l {
		w.str(s)
	}
	w.end(']')
}

// enum writes s, which must be one of known; what names the enumeration in
// the error.
func (w *writer) enum(s string, known map[string]bool, what string) {
	if !known[s] {
		w.fail(ErrUnknownKind, "unknown %s %q", what, s)
	}
	w.str(s)
}
