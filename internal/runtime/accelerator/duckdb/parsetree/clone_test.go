package parsetree_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb/parsetree"
)

// TestCloneIsDeep clones the tree of every corpus statement, checks that the
// clone encodes as the original, then changes every string, number and
// boolean of the clone: the original must still encode as DuckDB wrote it.
func TestCloneIsDeep(t *testing.T) {
	for i, e := range mustCorpus(t) {
		s := mustDecode(t, e.json)
		c := parsetree.CloneStatement(s)
		if got := mustEncode(t, c); !bytes.Equal(got, e.json) {
			t.Fatalf("statement %d: the clone encodes differently:%s", i, firstDiff(got, e.json))
		}
		scramble(reflect.ValueOf(c))
		if got := mustEncode(t, s); !bytes.Equal(got, e.json) {
			t.Fatalf("statement %d: changing the clone changed the original:%s\n%s", i, firstDiff(got, e.json), e.sql)
		}
		if got, _ := parsetree.Encode(&parsetree.Document{Statements: []*parsetree.SelectStatement{c}}); bytes.Equal(got, e.json) {
			t.Fatalf("statement %d: scramble changed nothing", i)
		}
	}
	if parsetree.Clone[parsetree.Expr](nil) != nil || parsetree.CloneStatement(nil) != nil {
		t.Error("a clone of nil is not nil")
	}
}

// scramble changes in place every string, number and boolean reachable from
// v through pointers, interfaces, slices and structs.
func scramble(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			scramble(v.Elem())
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		if e := v.Elem(); e.Kind() == reflect.Pointer {
			scramble(e)
		} else {
			c := reflect.New(e.Type()).Elem() // shares a slice's elements with e
			c.Set(e)
			scramble(c)
			v.Set(c)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			scramble(v.Field(i))
		}
	case reflect.Slice:
		for i := range v.Len() {
			scramble(v.Index(i))
		}
	case reflect.String:
		v.SetString(v.String() + "~")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float64:
		v.SetFloat(v.Float() + 1)
	}
}
