package parsetree_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb/parsetree"
)

// selectOf is a document of SELECT list FROM from.
func selectOf(from parsetree.TableRef, list ...parsetree.Expr) *parsetree.Document {
	return &parsetree.Document{Statements: []*parsetree.SelectStatement{{Node: &parsetree.SelectNode{
		List: list, From: from, GroupingSets: [][]uint64{}, Aggregate: parsetree.StandardHandling}}}}
}

func col(names ...string) *parsetree.ColumnRef { return &parsetree.ColumnRef{Names: names} }

func constant(id parsetree.TypeID, data any) *parsetree.Constant {
	return &parsetree.Constant{Value: parsetree.Value{Type: parsetree.LogicalType{ID: id}, Data: data}}
}

// TestEncodeRefusesTreesDuckDBCannotRead builds trees with one defect each:
// encoding must fail with the kind of error and the path of the defect.
func TestEncodeRefusesTreesDuckDBCannotRead(t *testing.T) {
	table := &parsetree.BaseTable{Table: "t"}
	tests := []struct {
		name      string
		doc       *parsetree.Document
		kind      error
		path, msg string
	}{
		{"nil operand", selectOf(table, &parsetree.Comparison{Op: parsetree.CompareEqual, Right: col("a")}),
			parsetree.ErrInvalid, "statements[0].node.select_list[0].left", "want an expression, got nil"},
		{"nil in a list", selectOf(table, col("a"), nil),
			parsetree.ErrInvalid, "statements[0].node.select_list[1]", "want an expression, got nil"},
		{"no FROM", selectOf(nil, col("a")),
			parsetree.ErrInvalid, "statements[0].node.from_table", "want a table reference, got nil"},
		{"no statement", &parsetree.Document{Statements: []*parsetree.SelectStatement{nil}},
			parsetree.ErrInvalid, "statements[0]", "want a statement, got nil"},
		{"no query node", &parsetree.Document{Statements: []*parsetree.SelectStatement{{}}},
			parsetree.ErrInvalid, "statements[0].node", "want a query node, got nil"},
		{"comparison without its operator", selectOf(table, &parsetree.Comparison{Left: col("a"), Right: col("b")}),
			parsetree.ErrUnknownKind, "statements[0].node.select_list[0].type", `unknown expression type ""`},
		{"unknown join type", selectOf(&parsetree.Join{Left: table, Right: table, Type: "OUTER", Ref: parsetree.JoinRegular}, col("a")),
			parsetree.ErrUnknownKind, "statements[0].node.from_table.join_type", `unknown join type "OUTER"`},
		{"data of the wrong Go type", selectOf(table, col("a"), constant(parsetree.TypeInteger, "1")),
			parsetree.ErrInvalid, "statements[0].node.select_list[1].value.value", "a INTEGER value cannot hold string 1"},
		{"data out of range", selectOf(table, constant(parsetree.TypeTinyint, int64(300))),
			parsetree.ErrInvalid, "statements[0].node.select_list[0].value.value", "a TINYINT value cannot hold int64 300"},
		{"DATE beyond 32 bits", selectOf(table, constant(parsetree.TypeDate, int64(1)<<31)),
			parsetree.ErrInvalid, "statements[0].node.select_list[0].value.value", "a DATE value cannot hold int64 2147483648"},
		{"UTINYINT beyond 8 bits", selectOf(table, constant(parsetree.TypeUTinyint, uint64(256))),
			parsetree.ErrInvalid, "statements[0].node.select_list[0].value.value", "a UTINYINT value cannot hold uint64 256"},
		{"decimal without its width", selectOf(table, constant(parsetree.TypeDecimal, int64(1))),
			parsetree.ErrInvalid, "statements[0].node.select_list[0].value.value", "a DECIMAL value cannot hold int64 1"},
		{"unknown type id", selectOf(table, &parsetree.Cast{Child: col("a"), Type: parsetree.LogicalType{ID: "INT4"}}),
			parsetree.ErrUnknownKind, "statements[0].node.select_list[0].cast_type.id", `unknown type id "INT4"`},
		{"nested value", selectOf(table, constant(parsetree.TypeList, []parsetree.Value{{Type: parsetree.LogicalType{ID: parsetree.TypeInteger}, Data: int64(1)}, {Type: parsetree.LogicalType{ID: parsetree.TypeInteger}, Data: 2}})),
			parsetree.ErrInvalid, "statements[0].node.select_list[0].value.value.children[1].value", "a INTEGER value cannot hold int 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parsetree.Encode(tc.doc)
			var pe *parsetree.PathError
			if !errors.As(err, &pe) || !errors.Is(err, tc.kind) || pe.Path != tc.path || pe.Msg != tc.msg {
				t.Fatalf("encode: %v,\nwant %s: %s (%v)", err, tc.path, tc.msg, tc.kind)
			}
		})
	}
}

// TestEncodeDoubles writes doubles as DuckDB's JSON writer does, so that a
// decoded tree encodes to the same bytes.
func TestEncodeDoubles(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {100, "100.0"}, {0.1, "0.1"}, {-2.5, "-2.5"},
		{1e20, "100000000000000000000.0"}, {1e21, "1e21"}, {1.2345678901234568e41, "1.2345678901234568e41"},
		{1e-6, "0.000001"}, {1.5e-7, "1.5e-7"}, {5e-324, "5e-324"}, {1.7976931348623157e308, "1.7976931348623157e308"},
		{math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"}, {math.NaN(), "NaN"},
	} {
		js, err := parsetree.Encode(selectOf(&parsetree.EmptyRef{}, constant(parsetree.TypeDouble, tc.f)))
		if err != nil {
			t.Fatal(err)
		}
		if want := `"is_null":false,"value":` + tc.want + `}`; !strings.Contains(string(js), want) {
			t.Errorf("%v: %s, want %s", tc.f, js, want)
		}
	}
}
