//go:build duckdb_arrow

package flightsrv_test

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func typeNames(t *testing.T, s *arrow.Schema) []string {
	t.Helper()
	var out []string
	for _, f := range s.Fields() {
		md := flightsql.ColumnMetadata{Data: &f.Metadata}
		name, _ := md.TypeName()
		if ro, ok := md.IsReadOnly(); !ok || !ro {
			t.Errorf("column %s: IS_READ_ONLY = %v, %v, want true", f.Name, ro, ok)
		}
		out = append(out, name)
	}
	return out
}

// TestColumnMetadata: every schema the server sends names each column's
// database type in the Flight SQL column metadata.
func TestColumnMetadata(t *testing.T) {
	r := newRecipe(t, nil, nil)
	c := newClient(t, r.srv)
	ctx := testContext(t)
	const q = "select name, count, 7/2 as half, now() as at, 1.5::decimal(10,2) as price from rankings order by count desc limit 5"
	want := []string{"VARCHAR", "BIGINT", "INTEGER", "TIMESTAMP WITH TIME ZONE", "DECIMAL"}

	info, err := c.Execute(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := flight.DeserializeSchema(info.Schema, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	if got := typeNames(t, schema); !slices.Equal(got, want) {
		t.Errorf("FlightInfo type names = %q, want %q", got, want)
	}
	price := schema.Field(4)
	if p, _ := (&flightsql.ColumnMetadata{Data: &price.Metadata}).Precision(); p != 10 {
		t.Errorf("price precision = %d, want 10", p)
	}
	_, got, _ := doGet(t, c, info)
	if names := typeNames(t, got); !slices.Equal(names, want) {
		t.Errorf("DoGet type names = %q, want %q", names, want)
	}

	res, err := c.GetExecuteSchema(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	s, err := flight.DeserializeSchema(res.GetSchema(), memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	if names := typeNames(t, s); !slices.Equal(names, want) {
		t.Errorf("GetSchema type names = %q, want %q", names, want)
	}

	prep, err := c.Prepare(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer prep.Close(ctx)
	if names := typeNames(t, prep.DatasetSchema()); !slices.Equal(names, want) {
		t.Errorf("prepared statement type names = %q, want %q", names, want)
	}
}
