package postgres_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

const allTypesDDL = `CREATE TABLE alltypes (
	id int4 PRIMARY KEY,
	i2 int2, i4 int4, i8 int8, f4 float4, f8 float8,
	n numeric(10,2), nu numeric,
	t text, vc varchar(10), bp char(3), nm name,
	b bool, d date, tm time, ts timestamp, tstz timestamptz,
	u uuid, j json, jb jsonb, by bytea, m mood,
	ai int4[], at text[], an numeric(5,1)[], ats timestamptz[], ab bool[]
)`

const allTypesRows = `INSERT INTO alltypes VALUES
(1, 42, 100000, 9000000000, 1.5, 2.25, 12345678.91, 3.14159,
 'hello', 'héllo', 'ab', 'pg_name', true, '2024-02-29', '13:14:15.123456',
 '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15.123456+02',
 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{"b": 1,  "a": [1, 2]}', '{"b": 1,  "a": [1, 2]}',
 '\xdeadbeef', 'happy', '{1,NULL,3}', '{"x","y z",NULL}', '{1.5,-2.0}',
 '{"2024-01-01 00:00:00+00"}', '{}'),
(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
(3, -32768, -2147483648, -9223372036854775808, 'NaN', '-Infinity', -99999999.99, 0.00000000005,
 '', '', 'a', '', false, '0001-01-01', '00:00:00',
 '1900-01-01 00:00:00', '1969-12-31 23:59:59.999999+00',
 '00000000-0000-0000-0000-000000000000', '[]', 'null',
 '\x', 'sad', '{}', '{""}', '{NULL}',
 NULL, '{true,false}'),
(4, 32767, 2147483647, 9223372036854775807, 3.4028235e38, -0.0, 99999999.99,
 -123456789012345678901234567.8901234567,
 'x', 'y', 'abc', 'z', true, '9999-12-31', '23:59:59.999999',
 '9999-12-31 23:59:59.999999', '0001-01-01 00:00:00+00',
 'ffffffff-ffff-ffff-ffff-ffffffffffff', '{}', '{}',
 '\x00', 'happy', '{2147483647}', '{"\"quoted\""}', '{9999.9}',
 '{NULL,"2000-01-01 00:00:00+00"}', '{NULL}')`

func TestTypes(t *testing.T) {
	dsn := newDatabase(t)
	mustExec(t, dsn, `CREATE TYPE mood AS ENUM ('sad', 'happy')`, allTypesDDL, allTypesRows)
	src := mustSource(t, dsnParams(dsn), "alltypes")
	got := mustScan(t, src, engine.ScanRequest{})
	slices.SortFunc(got.rows, func(a, b []string) int { return strings.Compare(a[0], b[0]) })

	tstz := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	want := []struct {
		name   string
		typ    arrow.DataType
		values []string // rows 1 to 4, as ValueStr renders them
	}{
		{"id", arrow.PrimitiveTypes.Int32, []string{"1", "2", "3", "4"}},
		{"i2", arrow.PrimitiveTypes.Int16, []string{"42", "(null)", "-32768", "32767"}},
		{"i4", arrow.PrimitiveTypes.Int32, []string{"100000", "(null)", "-2147483648", "2147483647"}},
		{"i8", arrow.PrimitiveTypes.Int64, []string{"9000000000", "(null)", "-9223372036854775808", "9223372036854775807"}},
		{"f4", arrow.PrimitiveTypes.Float32, []string{"1.5", "(null)", "NaN", "3.4028235e+38"}},
		{"f8", arrow.PrimitiveTypes.Float64, []string{"2.25", "(null)", "-Inf", "0"}},
		{"n", &arrow.Decimal128Type{Precision: 10, Scale: 2}, []string{"12345678.91", "(null)", "-99999999.99", "99999999.99"}},
		{"nu", &arrow.Decimal128Type{Precision: 38, Scale: 10}, []string{"3.14159", "(null)", "1e-10", "-123456789012345678901234567.8901234567"}},
		{"t", arrow.BinaryTypes.String, []string{"hello", "(null)", "", "x"}},
		{"vc", arrow.BinaryTypes.String, []string{"héllo", "(null)", "", "y"}},
		{"bp", arrow.BinaryTypes.String, []string{"ab ", "(null)", "a  ", "abc"}},
		{"nm", arrow.BinaryTypes.String, []string{"pg_name", "(null)", "", "z"}},
		{"b", arrow.FixedWidthTypes.Boolean, []string{"true", "(null)", "false", "true"}},
		{"d", arrow.FixedWidthTypes.Date32, []string{"2024-02-29", "(null)", "0001-01-01", "9999-12-31"}},
		{"tm", arrow.FixedWidthTypes.Time64us, []string{"13:14:15.123456", "(null)", "00:00:00.000000", "23:59:59.999999"}},
		{"ts", &arrow.TimestampType{Unit: arrow.Microsecond}, []string{"2024-02-29T13:14:15.123456", "(null)", "1900-01-01T00:00:00", "9999-12-31T23:59:59.999999"}},
		{"tstz", tstz, []string{"2024-02-29T11:14:15.123456Z", "(null)", "1969-12-31T23:59:59.999999Z", "0001-01-01T00:00:00Z"}},
		{"u", arrow.BinaryTypes.String, []string{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "(null)", "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"}},
		{"j", arrow.BinaryTypes.String, []string{`{"b": 1,  "a": [1, 2]}`, "(null)", "[]", "{}"}},
		{"jb", arrow.BinaryTypes.String, []string{`{"a": [1, 2], "b": 1}`, "(null)", "null", "{}"}},
		{"by", arrow.BinaryTypes.Binary, []string{"3q2+7w==", "(null)", "", "AA=="}}, // base64
		{"m", arrow.BinaryTypes.String, []string{"happy", "(null)", "sad", "happy"}},
		{"ai", arrow.ListOf(arrow.PrimitiveTypes.Int32), []string{"[1,null,3]", "(null)", "[]", "[2147483647]"}},
		{"at", arrow.ListOf(arrow.BinaryTypes.String), []string{`["x","y z",null]`, "(null)", `[""]`, `["\"quoted\""]`}},
		{"an", arrow.ListOf(&arrow.Decimal128Type{Precision: 5, Scale: 1}), []string{`["1.5","-2"]`, "(null)", "[null]", `["9999.9"]`}},
		{"ats", arrow.ListOf(tstz), []string{`["2024-01-01T00:00:00Z"]`, "(null)", "(null)", `[null,"2000-01-01T00:00:00Z"]`}},
		{"ab", arrow.ListOf(arrow.FixedWidthTypes.Boolean), []string{"[]", "(null)", "[true,false]", "[null]"}},
	}
	if got, want := got.schema.NumFields(), len(want); got != want {
		t.Fatalf("fields=%d, want %d", got, want)
	}
	for i, w := range want {
		f := got.schema.Field(i)
		if f.Name != w.name || !arrow.TypeEqual(f.Type, w.typ) {
			t.Errorf("field %d = %s %s, want %s %s", i, f.Name, f.Type, w.name, w.typ)
		}
		if got, want := f.Nullable, w.name != "id"; got != want {
			t.Errorf("field %s nullable=%v, want %v", f.Name, got, want)
		}
		for r, v := range w.values {
			if got := got.rows[r][i]; got != v {
				t.Errorf("%s row %d = %q, want %q", w.name, r+1, got, v)
			}
		}
	}
}

// TestDecimalScale checks decimals keep their scale exactly, which ValueStr hides.
func TestDecimalScale(t *testing.T) {
	dsn := newDatabase(t)
	mustExec(t, dsn, `CREATE TABLE d AS SELECT 1.50::numeric(6,2) AS a, 0.00000000005::numeric AS b,
		-0.00000000005::numeric AS c, 1e27::numeric AS e, 10000::numeric(5,0) AS f, 0::numeric(38,38) AS g`)
	src := mustSource(t, dsnParams(dsn), "d")
	var got []string
	err := src.Scan(context.Background(), engine.ScanRequest{}, func(snap engine.Snapshot) error {
		for snap.Reader.Next() {
			rec := snap.Reader.RecordBatch()
			for i, col := range rec.Columns() {
				scale := rec.Schema().Field(i).Type.(*arrow.Decimal128Type).Scale
				got = append(got, col.(*array.Decimal128).Value(0).ToString(scale))
			}
		}
		return snap.Reader.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1.50", "0.0000000001", "-0.0000000001", "1000000000000000000000000000.0000000000", "10000", "0.00000000000000000000000000000000000000"}
	if !slices.Equal(got, want) {
		t.Fatalf("decimals=%q, want %q", got, want)
	}
}

// TestValueErrors checks values without an Arrow form fail, naming the column.
func TestValueErrors(t *testing.T) {
	dsn := newDatabase(t)
	mustExec(t, dsn, `CREATE TABLE bad (id int4, big numeric, nan numeric(10,2), inf timestamptz, dinf date, far timestamp)`,
		`INSERT INTO bad VALUES (1, 1e28, 'NaN', 'infinity', '-infinity', '294276-12-31 23:59:59')`)
	src := mustSource(t, dsnParams(dsn), "bad")
	for _, tc := range []struct{ column, want string }{
		{"big", "does not fit decimal128(38,10)"},
		{"nan", "NaN"},
		{"inf", "infinity"},
		{"dinf", "infinity"},
		{"far", "294246"},
	} {
		_, err := scan(context.Background(), src, engine.ScanRequest{Columns: []string{tc.column}})
		if !errors.Is(err, postgres.ErrValue) {
			t.Fatalf("%s: err=%v, want ErrValue", tc.column, err)
		}
		for _, w := range []string{`column "` + tc.column + `"`, tc.want} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: err=%q, want it to mention %q", tc.column, err, w)
			}
		}
	}
}
