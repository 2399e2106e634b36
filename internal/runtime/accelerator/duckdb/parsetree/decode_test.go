package parsetree_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb/parsetree"
)

// TestDecodeRefusesWhatItDoesNotKnow changes one thing in a tree DuckDB
// wrote: decoding must fail with the kind of error and the path of the
// change.
func TestDecodeRefusesWhatItDoesNotKnow(t *testing.T) {
	const (
		join    = "SELECT o.id, p.name FROM orders o JOIN products p"
		casts   = "SELECT CAST(a AS DECIMAL(10,2))"
		ints    = "SELECT 1, -1, 0, 2147483647"
		doubles = "SELECT 1.5, -1.5, 0.1, 1e10"
		sample  = "SELECT * FROM t USING SAMPLE reservoir(10%)"
		ordered = "SELECT a FROM t ORDER BY 1 DESC NULLS FIRST"
	)
	set := func(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }
	del := func(k string) func(map[string]any) { return func(m map[string]any) { delete(m, k) } }
	tests := []struct {
		name, stmt, at string
		change         func(map[string]any)
		kind           error
		path, msg      string
	}{
		{"renamed field", join, "statements[0].node.from_table.left", func(m map[string]any) { m["aliass"] = m["alias"]; delete(m, "alias") },
			parsetree.ErrUnknownField, "statements[0].node.from_table.left", `unknown field "aliass", missing field "alias"`},
		{"added field", join, "statements[0].node.from_table", set("is_implicit", false),
			parsetree.ErrUnknownField, "statements[0].node.from_table", `unknown field "is_implicit"`},
		{"added field in the envelope", join, "statements[0]", set("comment", ""),
			parsetree.ErrUnknownField, "statements[0]", `unknown field "comment"`},
		{"missing field", join, "statements[0].node.select_list[1]", del("query_location"),
			parsetree.ErrMissingField, "statements[0].node.select_list[1]", `missing field "query_location"`},
		{"missing class", join, "statements[0].node.select_list[0]", del("class"),
			parsetree.ErrMissingField, "statements[0].node.select_list[0]", `missing field "class"`},
		{"unknown expression class", join, "statements[0].node.select_list[0]", set("class", "COLUMN_REFERENCE"),
			parsetree.ErrUnknownKind, "statements[0].node.select_list[0].class", `unknown expression class "COLUMN_REFERENCE"`},
		{"unknown expression type", join, "statements[0].node.from_table.condition", set("type", "COMPARE_EQUALS"),
			parsetree.ErrUnknownKind, "statements[0].node.from_table.condition.type", `unknown expression type "COMPARE_EQUALS"`},
		{"class and type disagree", casts, "statements[0].node.select_list[0]", set("type", "FUNCTION"),
			parsetree.ErrUnknownKind, "statements[0].node.select_list[0].type", `expression class CAST with type "FUNCTION", want "OPERATOR_CAST"`},
		{"unknown table reference type", join, "statements[0].node.from_table.right", set("type", "BASE_TABLE_REF"),
			parsetree.ErrUnknownKind, "statements[0].node.from_table.right.type", `unknown table reference type "BASE_TABLE_REF"`},
		{"unknown query node type", join, "statements[0].node", set("type", "CTE_NODE"),
			parsetree.ErrUnknownKind, "statements[0].node.type", `unknown query node type "CTE_NODE"`},
		{"unknown modifier type", ordered, "statements[0].node.modifiers[0]", set("type", "TOP_N_MODIFIER"),
			parsetree.ErrUnknownKind, "statements[0].node.modifiers[0].type", `unknown result modifier type "TOP_N_MODIFIER"`},
		{"unknown join type", join, "statements[0].node.from_table", set("join_type", "OUTER"),
			parsetree.ErrUnknownKind, "statements[0].node.from_table.join_type", `unknown join type "OUTER"`},
		{"unknown null order", ordered, "statements[0].node.modifiers[0].orders[0]", set("null_order", "NULLS_HIGH"),
			parsetree.ErrUnknownKind, "statements[0].node.modifiers[0].orders[0].null_order", `unknown null order "NULLS_HIGH"`},
		{"unknown sample method", sample, "statements[0].node.sample", set("method", "Bernoully"),
			parsetree.ErrUnknownKind, "statements[0].node.sample.method", `unknown sample method "Bernoully"`},
		{"unknown type id", casts, "statements[0].node.select_list[0].cast_type", set("id", "INT4"),
			parsetree.ErrUnknownKind, "statements[0].node.select_list[0].cast_type.id", `unknown type id "INT4"`},
		{"unknown type info", casts, "statements[0].node.select_list[0].cast_type.type_info", set("type", "ENUM_TYPE_INFO"),
			parsetree.ErrUnknownKind, "statements[0].node.select_list[0].cast_type.type_info.type", `unknown type info "ENUM_TYPE_INFO"`},
		{"extension info", casts, "statements[0].node.select_list[0].cast_type.type_info", set("extension_info", map[string]any{}),
			parsetree.ErrUnknownKind, "statements[0].node.select_list[0].cast_type.type_info.extension_info", "a type's extension info is not modelled"},
		{"string for a number", join, "statements[0].node.select_list[0]", set("query_location", "7"),
			parsetree.ErrInvalid, "statements[0].node.select_list[0].query_location", `want an unsigned integer, got "7"`},
		{"negative location", join, "statements[0].node.select_list[0]", set("query_location", json.Number("-1")),
			parsetree.ErrInvalid, "statements[0].node.select_list[0].query_location", "want an unsigned integer, got -1"},
		{"decimal width out of range", casts, "statements[0].node.select_list[0].cast_type.type_info", set("width", json.Number("256")),
			parsetree.ErrInvalid, "statements[0].node.select_list[0].cast_type.type_info.width", "256 is out of range of a 8-bit unsigned integer"},
		{"INTEGER out of range", ints, "statements[0].node.select_list[0].value", set("value", json.Number("3000000000")),
			parsetree.ErrInvalid, "statements[0].node.select_list[0].value.value", "3000000000 is out of range of a 32-bit integer"},
		{"DOUBLE written as an integer", doubles, "statements[0].node.select_list[3].value", set("value", json.Number("10")),
			parsetree.ErrInvalid, "statements[0].node.select_list[3].value.value", "want a real number, got 10"},
		{"null for a required expression", casts, "statements[0].node.select_list[0]", set("child", nil),
			parsetree.ErrInvalid, "statements[0].node.select_list[0].child", "want an expression, got null"},
		{"null table reference", join, "statements[0].node", set("from_table", nil),
			parsetree.ErrInvalid, "statements[0].node.from_table", "want a table reference, got null"},
		{"list for an object", join, "statements[0].node", set("cte_map", []any{}),
			parsetree.ErrInvalid, "statements[0].node.cte_map", "want an object, got a list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			js := mutated(t, corpusEntry(t, tc.stmt).json, tc.at, tc.change)
			_, err := parsetree.Decode(js)
			var pe *parsetree.PathError
			if !errors.As(err, &pe) {
				t.Fatalf("decode: %v, want a *PathError", err)
			}
			if !errors.Is(err, tc.kind) || pe.Path != tc.path || pe.Msg != tc.msg {
				t.Fatalf("decode: %v (%v),\nwant %s: %s (%v)", err, pe.Err, tc.path, tc.msg, tc.kind)
			}
			if got, want := err.Error(), tc.path+": "+tc.msg; got != want {
				t.Fatalf("error %q, want %q", got, want)
			}
		})
	}
}

// TestDecodeErrorDocument decodes what json_serialize_sql returns for a text
// it cannot parse: the document carries DuckDB's error, and Select returns it.
func TestDecodeErrorDocument(t *testing.T) {
	js := []byte(`{"error":true,"error_type":"parser","error_message":"syntax error at or near \"FROM\"","error_subtype":"SYNTAX_ERROR","position":"7"}`)
	doc, err := parsetree.Decode(js)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Error == nil || doc.Error.Type != "parser" || doc.Error.Extra["position"] != "7" || doc.Error.Extra["error_subtype"] != "SYNTAX_ERROR" || len(doc.Error.Extra) != 2 {
		t.Fatalf("error %+v", doc.Error)
	}
	if _, err := doc.Select(); err == nil || err.Error() != `duckdb parser error: syntax error at or near "FROM"` {
		t.Fatalf("select: %v", err)
	}
	enc, err := parsetree.Encode(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, enc, js) {
		t.Fatalf("encoded %s, want %s", enc, js)
	}
	_, err = parsetree.Decode([]byte(`{"error":true,"error_type":"parser"}`))
	if !errors.Is(err, parsetree.ErrMissingField) || err.Error() != `missing field "error_message"` {
		t.Fatalf("decode an error without its message: %v", err)
	}
}

// TestDecodeRejectsMalformedJSON feeds text that is not one JSON document.
func TestDecodeRejectsMalformedJSON(t *testing.T) {
	for _, in := range []string{``, `{`, `{"error":false,"statements":[]} {}`, `[]`, `{"error":false,"statements":[]`} {
		if _, err := parsetree.Decode([]byte(in)); err == nil {
			t.Errorf("decode %q: no error", in)
		}
	}
	if _, err := parsetree.Decode([]byte(`{"error":false,"statements":[]}`)); err != nil {
		t.Errorf("decode an empty document: %v", err)
	}
}

// TestDecodeNonFiniteDoubles reads the Infinity DuckDB writes for 1e400 as
// infinity, and the same words inside strings as text.
func TestDecodeNonFiniteDoubles(t *testing.T) {
	s := mustDecode(t, corpusEntry(t, "SELECT 1e400").json)
	list := s.Node.(*parsetree.SelectNode).List
	if f := list[0].(*parsetree.Constant).Value.Data; f != math.Inf(1) {
		t.Errorf("1e400 = %v, want +Inf", f)
	}
	if f := list[1].(*parsetree.Constant).Value.Data; f != math.Inf(-1) {
		t.Errorf("-1e400 = %v, want -Inf", f)
	}
	s = mustDecode(t, corpusEntry(t, "SELECT 'Infinity', 'NaN'").json)
	for i, want := range []string{"Infinity", "NaN", "-Infinity"} {
		if got := s.Node.(*parsetree.SelectNode).List[i].(*parsetree.Constant).Value.Data; got != want {
			t.Errorf("string %d = %#v, want %q", i, got, want)
		}
	}
}

// corpusEntry returns the corpus statement that starts with prefix.
func corpusEntry(tb testing.TB, prefix string) entry {
	tb.Helper()
	for _, e := range mustCorpus(tb) {
		if strings.HasPrefix(e.sql, prefix) {
			return e
		}
	}
	tb.Fatalf("no corpus statement starts with %q", prefix)
	return entry{}
}

var pathStep = regexp.MustCompile(`^([a-z_]+)((?:\[\d+\])*)$`)

// mutated returns js with change applied to the object at path.
func mutated(tb testing.TB, js []byte, path string, change func(map[string]any)) []byte {
	tb.Helper()
	root := generic(tb, js)
	cur := root
	for _, step := range strings.Split(path, ".") {
		m := pathStep.FindStringSubmatch(step)
		if m == nil {
			tb.Fatalf("bad path step %q", step)
		}
		cur = cur.(map[string]any)[m[1]]
		for _, idx := range regexp.MustCompile(`\d+`).FindAllString(m[2], -1) {
			i, _ := strconv.Atoi(idx)
			cur = cur.([]any)[i]
		}
	}
	obj, ok := cur.(map[string]any)
	if !ok {
		tb.Fatalf("%s is not an object in %s", path, js)
	}
	change(obj)
	out, err := json.Marshal(root)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// nonFinite quotes the doubles DuckDB writes as bare words, which JSON
// lacks.
var nonFinite = strings.NewReplacer(`"value":Infinity`, `"value":"Infinity"`, `"value":-Infinity`, `"value":"-Infinity"`, `"value":NaN`, `"value":"NaN"`)

// generic decodes JSON as maps and lists, numbers as their text.
func generic(tb testing.TB, js []byte) any {
	tb.Helper()
	dec := json.NewDecoder(strings.NewReader(nonFinite.Replace(string(js))))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("read %s: %v", js, err)
	}
	return v
}

// sameJSON reports whether two documents are equal as decoded JSON.
func sameJSON(tb testing.TB, a, b []byte) bool {
	tb.Helper()
	ja, _ := json.Marshal(generic(tb, a))
	jb, _ := json.Marshal(generic(tb, b))
	return bytes.Equal(ja, jb)
}
