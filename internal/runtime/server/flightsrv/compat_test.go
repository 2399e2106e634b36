//go:build duckdb_arrow

package flightsrv_test

import (
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
)

// A prepared statement describes its parameters, and a parameter of Arrow's
// null type (what a client sends for a value it has no type for) binds NULL.
func TestPreparedStatementParameters(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) }) // runs last
	products, orders := runtimetest.RecipeSources(t, mem, 100)
	e, db := runtimetest.NewEngineStore(t, runtimetest.RecipePod, map[string]engine.Source{"products": products, "orders": orders}, nil)
	runtimetest.WaitReady(t, e)
	srv := runtimetest.StartServer(t, e, mem, func(s *flightsrv.Server) { s.ParamTypes = db.ParamTypes })
	c := newClient(t, srv)
	ctx := testContext(t)
	stmt, err := c.Prepare(ctx, "SELECT name FROM products WHERE id = ? OR ? IS NULL ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close(ctx)
	ps := stmt.ParameterSchema()
	if ps == nil || ps.NumFields() != 2 || !arrow.TypeEqual(ps.Field(0).Type, arrow.PrimitiveTypes.Int32) {
		t.Fatalf("parameter schema = %v, want 2 parameters, the first the INTEGER of products.id", ps)
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{
		{Name: "1", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "2", Type: arrow.Null, Nullable: true}}, nil))
	b.Field(0).(*array.Int64Builder).Append(3)
	b.Field(1).AppendNull()
	params := b.NewRecordBatch()
	b.Release()
	stmt.SetParameters(params)
	info, err := stmt.Execute(ctx)
	params.Release()
	if err != nil {
		t.Fatalf("execute with a null-typed parameter: %v", err)
	}
	if got, _, _ := doGet(t, c, info); len(got) != 3 {
		t.Fatalf("rows = %q, want all 3 products (? IS NULL holds)", got)
	}
}

// ListActions lists the actions this server performs, no others.
func TestListActionsListsWhatIsServed(t *testing.T) {
	r := newRecipe(t, nil, nil)
	c := newClient(t, r.srv)
	ctx := testContext(t)
	stream, err := c.Client.ListActions(ctx, &flight.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		a, err := stream.Recv()
		if err != nil {
			break
		}
		got = append(got, a.GetType())
	}
	slices.Sort(got)
	if want := []string{flightsql.ClosePreparedStatementActionType, flightsql.CreatePreparedStatementActionType, "spice.watch"}; !slices.Equal(got, want) {
		t.Fatalf("actions = %v, want %v", got, want)
	}
}

// GetSqlInfo describes the SQL dialect as upstream does, not only the server.
func TestSqlInfoDescribesTheDialect(t *testing.T) {
	r := newRecipe(t, nil, nil)
	c := newClient(t, r.srv)
	ctx := testContext(t)
	info, err := c.GetSqlInfo(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	values := map[uint32]string{}
	for rdr.Next() {
		rec := rdr.RecordBatch()
		ids := rec.Column(0).(*array.Uint32)
		for i := 0; i < int(rec.NumRows()); i++ {
			values[ids.Value(i)] = rec.Column(1).ValueStr(i)
		}
	}
	if len(values) < 40 {
		t.Fatalf("GetSqlInfo answers %d entries, want the dialect's too (40 or more)", len(values))
	}
	for id, want := range map[flightsql.SqlInfo]string{
		flightsql.SqlInfoIdentifierQuoteChar:     `"`,
		flightsql.SqlInfoFlightSqlServerReadOnly: "true",
		flightsql.SqlInfoDDLTable:                "false",
	} {
		if got := values[uint32(id)]; !containsValue(got, want) {
			t.Errorf("sql info %d = %q, want %q", id, got, want)
		}
	}
}

func containsValue(got, want string) bool {
	return got == want || len(got) > len(want) && got[len(got)-len(want)-1:len(got)-1] == want
}

// Answers carry upstream's legacy x-cache header besides Results-Cache-Status.
func TestXCacheHeader(t *testing.T) {
	r := newRecipe(t, func(e *engine.Engine) { e.Cache = engine.NewCache(0, time.Minute) }, nil)
	c := newClient(t, r.srv)
	ctx := testContext(t)
	for _, want := range []string{"Miss from spiceai", "Hit from spiceai"} {
		info, err := c.Execute(ctx, "SELECT name FROM products ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		_, _, md := doGet(t, c, info)
		if got := md.Get("x-cache"); len(got) != 1 || got[0] != want {
			t.Fatalf("x-cache = %q, want %q", got, want)
		}
	}
}
