//go:build duckdb_arrow

package parsetree_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb/parsetree"
)

// literals are values of every type the model holds, with the Go type of
// their Data; print is false where DuckDB cannot read back the JSON it writes.
var literals = []struct {
	sql   string
	data  any
	print bool
}{
	{"TRUE", true, true},
	{"(-128)::TINYINT", int64(0), true},
	{"32767::SMALLINT", int64(0), true},
	{"(-2147483648)::INTEGER", int64(0), true},
	{"(-9223372036854775808)::BIGINT", int64(0), true},
	{"255::UTINYINT", uint64(0), true},
	{"65535::USMALLINT", uint64(0), true},
	{"4294967295::UINTEGER", uint64(0), true},
	{"18446744073709551615::UBIGINT", uint64(0), true},
	{"(-170141183460469231731687303715884105728)::HUGEINT", parsetree.Int128{}, true},
	{"340282366920938463463374607431768211455::UHUGEINT", parsetree.Uint128{}, true},
	{"12.34::DECIMAL(4,2)", int64(0), true},
	{"(-123456.789)::DECIMAL(9,3)", int64(0), true},
	{"123456789012.345678::DECIMAL(18,6)", int64(0), true},
	{"12345678901234567890.123456789::DECIMAL(38,9)", parsetree.Int128{}, true},
	{"(-1.5)::DECIMAL(38,1)", parsetree.Int128{}, true},
	{"0.5::FLOAT", float64(0), true},
	{"(1/3)::FLOAT", float64(0), true},
	{"1e21::DOUBLE", float64(0), true},
	{"5e-324::DOUBLE", float64(0), true},
	{"(-0.0)::DOUBLE", float64(0), true},
	{"(2/3)::DOUBLE", float64(0), true},
	{"'NaN'::DOUBLE", float64(0), false},
	{"'-inf'::FLOAT", float64(0), false},
	{"'2020-01-01'::DATE", int64(0), true},
	{"'infinity'::DATE", int64(0), true},
	{"'12:34:56.789'::TIME", int64(0), true},
	{"'12:34:56.123456789'::TIME_NS", int64(0), true},
	{"'12:00:00+01'::TIMETZ", uint64(0), true},
	{"'2020-01-01 12:34:56.789'::TIMESTAMP", int64(0), true},
	{"'2020-01-01 12:34:56'::TIMESTAMP_S", int64(0), true},
	{"'2020-01-01 12:34:56.789'::TIMESTAMP_MS", int64(0), true},
	{"'2020-01-01 12:34:56.123456789'::TIMESTAMP_NS", int64(0), true},
	{"'2020-01-01 12:34:56.789+02'::TIMESTAMPTZ", int64(0), true},
	{"INTERVAL '1 year 2 months 3 days 04:05:06.789'", parsetree.Interval{}, true},
	{"INTERVAL '-7 days'", parsetree.Interval{}, true},
	{"'it''s \"q\" \\ ☃ €'", "", true},
	{"''", "", true},
	{"'{\"k\": [1]}'::JSON", "", true},
	{"'\\xAA\\x00ab'::BLOB", "", true},
	{"'a3b4c5d6-e7f8-4a1b-9c2d-3e4f5a6b7c8d'::UUID", parsetree.Int128{}, true},
	{"[1, 2, NULL]::INTEGER[]", []parsetree.Value{}, true},
	{"[]::VARCHAR[]", []parsetree.Value{}, true},
	{"[[1], [2, 3]]", []parsetree.Value{}, true},
	{"{'a': 1, 'b': 'x', 'c': [1.5]}", []parsetree.Value{}, true},
	{"MAP {'k': 1, 'l': 2}", []parsetree.Value{}, true},
	{"[1, 2, 3]::INTEGER[3]", []parsetree.Value{}, true},
	{"union_value(i := 3)::UNION(i INT, s VARCHAR)", []parsetree.Value{}, true},
	{"NULL::INTEGER", nil, true},
	{"NULL", nil, true},
	{"NULL::VARCHAR[]", nil, true},
}

// TestLiteralsOfEveryType takes DuckDB's own serialization of a value of
// every type (the constant of an optimized plan), places it in the parse
// tree of a SELECT, decodes it and encodes it: the JSON must be the same
// bytes, Data must have the documented Go type, and the SQL DuckDB prints
// from the encoded tree must give the same value as the literal.
func TestLiteralsOfEveryType(t *testing.T) {
	db := mustDB(t)
	base := serialize(t, db, "SELECT 0")
	zero := []byte(`"value":{"type":{"id":"INTEGER","type_info":null},"is_null":false,"value":0}`)
	if bytes.Count(base, zero) != 1 {
		t.Fatalf("the tree of SELECT 0 has no constant 0: %s", base)
	}
	for _, l := range literals {
		t.Run(l.sql, func(t *testing.T) {
			val := planValue(t, db, l.sql)
			js := bytes.Replace(base, zero, append([]byte(`"value":`), val...), 1)
			s := mustDecode(t, js)
			if enc := mustEncode(t, s); !bytes.Equal(enc, js) {
				t.Fatalf("encoded tree differs from DuckDB's:%s", firstDiff(enc, js))
			}
			c := s.Node.(*parsetree.SelectNode).List[0].(*parsetree.Constant)
			if got, want := reflect.TypeOf(c.Value.Data), reflect.TypeOf(l.data); got != want {
				t.Fatalf("Data is a %v, want a %v", got, want)
			}
			if !l.print {
				return
			}
			printed, err := deserialize(db, js)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := scalar(t, db, "SELECT CAST(x AS VARCHAR) FROM ("+printed+") t(x)"),
				scalar(t, db, "SELECT CAST("+l.sql+" AS VARCHAR)"); got != want {
				t.Errorf("%s printed as %s gives %q, want %q", l.sql, printed, got, want)
			}
		})
	}
}

// planConstant finds the constant of a one-expression plan.
var planConstant = regexp.MustCompile(`"expressions":\[\{"expression_class":"BOUND_CONSTANT","type":"VALUE_CONSTANT","alias":"","query_location":\d+,"value":`)

// planValue returns DuckDB's JSON of the value of a constant expression: the
// folded constant of its optimized plan.
func planValue(tb testing.TB, db *sql.DB, expr string) []byte {
	tb.Helper()
	js := scalar(tb, db, `SELECT json_serialize_plan(?::VARCHAR, optimize := true)::VARCHAR`, "SELECT "+expr)
	loc := planConstant.FindStringIndex(js)
	if loc == nil {
		tb.Fatalf("no constant in the plan of %s: %s", expr, js)
	}
	// Find the end of the value with a JSON reader, the non-finite words
	// that DuckDB writes replaced by numbers of the same length.
	rest := js[loc[1]:]
	dec := json.NewDecoder(strings.NewReader(strings.NewReplacer("-Infinity", "-1.000000", "Infinity", "1.000000", "NaN", "0.0").Replace(rest)))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("read the value of %s: %v", expr, err)
	}
	return []byte(rest[:dec.InputOffset()])
}

func scalar(tb testing.TB, db *sql.DB, query string, args ...any) string {
	tb.Helper()
	var s sql.NullString
	if err := db.QueryRowContext(context.Background(), query, args...).Scan(&s); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	if !s.Valid {
		return "NULL"
	}
	return s.String
}

// TestValuesNotModelledFailLoudly decodes DuckDB's serialization of values
// the parser never writes: each must be an ErrUnknownKind naming the place.
func TestValuesNotModelledFailLoudly(t *testing.T) {
	db := mustDB(t)
	base := serialize(t, db, "SELECT 0")
	zero := []byte(`"value":{"type":{"id":"INTEGER","type_info":null},"is_null":false,"value":0}`)
	for _, tc := range []struct{ sql, path string }{
		{"'x'::ENUM('x', 'y')", "statements[0].node.select_list[0].value.type.type_info.type"},
		{"'x'::VARIANT", "statements[0].node.select_list[0].value.value"},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			js := bytes.Replace(base, zero, append([]byte(`"value":`), planValue(t, db, tc.sql)...), 1)
			_, err := parsetree.Decode(js)
			var pe *parsetree.PathError
			if !errors.As(err, &pe) || !errors.Is(err, parsetree.ErrUnknownKind) || pe.Path != tc.path {
				t.Fatalf("decode: %v, want an ErrUnknownKind at %s", err, tc.path)
			}
		})
	}
}
