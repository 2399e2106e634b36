//go:build duckdb_arrow

package flightsrv_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// doGet reads every endpoint of info, returning the rows and the response
// headers of the last DoGet.
func doGet(t *testing.T, c *flightsql.Client, info *flight.FlightInfo) ([]string, *arrow.Schema, metadata.MD) {
	t.Helper()
	ctx := testContext(t)
	var out []string
	var schema *arrow.Schema
	var md metadata.MD
	for _, ep := range info.Endpoint {
		rd, err := c.DoGet(ctx, ep.Ticket, grpc.Header(&md))
		if err != nil {
			t.Fatalf("DoGet: %v", err)
		}
		schema = rd.Schema()
		out = append(out, rows(t, rd)...)
		rd.Release()
	}
	return out, schema, md
}

func TestClientExecute(t *testing.T) {
	r := newRecipe(t, nil, nil)
	c := newClient(t, r.srv)
	ctx := testContext(t)

	var infoMD metadata.MD
	info, err := c.Execute(ctx, "select name, count from rankings order by count desc limit 5", grpc.Header(&infoMD))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(info.Endpoint), 1; got != want {
		t.Fatalf("endpoints=%d, want %d", got, want)
	}
	got, schema, getMD := doGet(t, c, info)
	if !equal(got, wantRankings) {
		t.Errorf("rows=%q, want %q", got, wantRankings)
	}
	if got, want := fieldNames(schema), []string{"name", "count"}; !slices.Equal(got, want) {
		t.Errorf("fields=%q, want %q", got, want)
	}
	if got, want := schema.Field(1).Type, arrow.PrimitiveTypes.Int64; !arrow.TypeEqual(got, want) {
		t.Errorf("count type=%s, want %s (HUGEINT narrowed)", got, want)
	}
	// GetFlightInfo and DoGet report the same data: the result is held between them.
	if got, want := positionOf(t, infoMD), position.LSN(100); got != want {
		t.Errorf("GetFlightInfo position=%s, want %s", got, want)
	}
	if got, want := positionOf(t, getMD), position.LSN(100); got != want {
		t.Errorf("DoGet position=%s, want %s", got, want)
	}
	if got := getMD.Get(wire.MetadataCacheStatus); len(got) != 1 || got[0] != "BYPASS" {
		t.Errorf("%s=%q, want BYPASS (no results cache configured)", wire.MetadataCacheStatus, got)
	}
}

func TestClientZeroRows(t *testing.T) {
	r := newRecipe(t, nil, nil)
	c := newClient(t, r.srv)
	info, err := c.Execute(testContext(t), "SELECT id, name FROM products WHERE id < 0")
	if err != nil {
		t.Fatal(err)
	}
	got, schema, _ := doGet(t, c, info)
	if len(got) != 0 {
		t.Errorf("rows=%q, want none", got)
	}
	if schema == nil {
		t.Fatal("no schema for zero rows")
	}
	if got, want := fieldNames(schema), []string{"id", "name"}; !slices.Equal(got, want) {
		t.Errorf("fields=%q, want %q", got, want)
	}
}

func TestClientPreparedStatement(t *testing.T) {
	r := newRecipe(t, nil, nil)
	c := newClient(t, r.srv)
	ctx := testContext(t)
	stmt, err := c.Prepare(ctx, "SELECT name FROM products WHERE id = ? ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close(ctx)
	if s := stmt.DatasetSchema(); s == nil || !slices.Equal(fieldNames(s), []string{"name"}) {
		t.Errorf("dataset schema=%v, want one field name", s)
	}

	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	for id, want := range map[int64]string{2: "the most delicious chocalate", 3: "nintendo"} {
		b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil))
		b.Field(0).(*array.Int64Builder).Append(id)
		params := b.NewRecordBatch()
		b.Release()
		stmt.SetParameters(params)
		info, err := stmt.Execute(ctx)
		params.Release()
		if err != nil {
			t.Fatalf("execute with id=%d: %v", id, err)
		}
		got, _, _ := doGet(t, c, info)
		if !equal(got, []string{want}) {
			t.Errorf("id=%d: rows=%q, want %q", id, got, want)
		}
	}
	if err := stmt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// A closed statement is gone.
	_, err = flightsql.NewPreparedStatement(c, []byte("0123456789abcdef")).Execute(ctx)
	if err == nil {
		t.Error("executing an unknown handle succeeded")
	}
}

func TestClientGetTables(t *testing.T) {
	r := newRecipe(t, nil, nil)
	c := newClient(t, r.srv)
	ctx := testContext(t)

	all, err := c.GetTables(ctx, &flightsql.GetTablesOpts{IncludeSchema: true})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := c.DoGet(ctx, all.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	var names []string
	for rd.Next() {
		rec := rd.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			cat := rec.Column(0).(*array.String).Value(i)
			sch := rec.Column(1).(*array.String).Value(i)
			name := rec.Column(2).(*array.String).Value(i)
			typ := rec.Column(3).(*array.String).Value(i)
			names = append(names, cat+"."+sch+"."+name+":"+typ)
			schema, err := flight.DeserializeSchema(rec.Column(4).(*array.Binary).Value(i), memory.DefaultAllocator)
			if err != nil {
				t.Fatalf("schema of %s: %v", name, err)
			}
			want := map[string][]string{"orders": {"id", "product_id", "count"}, "products": {"id", "name"}, "rankings": {"name", "count"}}[name]
			if got := fieldNames(schema); !slices.Equal(got, want) {
				t.Errorf("%s fields=%q, want %q", name, got, want)
			}
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"spice.public.orders:BASE TABLE", "spice.public.products:BASE TABLE", "spice.public.rankings:VIEW"}
	if !slices.Equal(names, want) {
		t.Errorf("tables=%q, want %q", names, want)
	}

	for _, tc := range []struct {
		pattern string
		types   []string
		want    []string
	}{
		{pattern: "rankings", want: []string{"rankings|VIEW"}},
		{pattern: "RANK%", want: []string{"rankings|VIEW"}},
		{pattern: "_rders", want: []string{"orders|BASE TABLE"}},
		{pattern: "%", types: []string{"VIEW"}, want: []string{"rankings|VIEW"}},
		{pattern: "nope", want: nil},
		{pattern: `ranking\_`, want: nil},
	} {
		pattern := tc.pattern
		info, err := c.GetTables(ctx, &flightsql.GetTablesOpts{TableNameFilterPattern: &pattern, TableTypes: tc.types})
		if err != nil {
			t.Fatal(err)
		}
		got, _, _ := doGet(t, c, info)
		for i := range got {
			got[i] = strings.TrimPrefix(got[i], "spice|public|")
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("pattern %q types %q: tables=%q, want %q", tc.pattern, tc.types, got, tc.want)
		}
	}
}

func TestClientCatalogs(t *testing.T) {
	r := newRecipe(t, nil, func(s *flightsrv.Server) {
		s.Version = "1.2.3"
		s.PrimaryKeys = func(table string) []string {
			if table == "orders" {
				return []string{"id"}
			}
			return nil
		}
	})
	c := newClient(t, r.srv)
	ctx := testContext(t)
	check := func(what string, info *flight.FlightInfo, err error, want []string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got, _, _ := doGet(t, c, info); !slices.Equal(got, want) {
			t.Errorf("%s=%q, want %q", what, got, want)
		}
	}
	info, err := c.GetCatalogs(ctx)
	check("catalogs", info, err, []string{"spice"})
	info, err = c.GetDBSchemas(ctx, &flightsql.GetDBSchemasOpts{})
	check("schemas", info, err, []string{"spice|public"})
	other := "other"
	info, err = c.GetDBSchemas(ctx, &flightsql.GetDBSchemasOpts{Catalog: &other})
	check("schemas of another catalog", info, err, nil)
	info, err = c.GetTableTypes(ctx)
	check("table types", info, err, []string{"BASE TABLE", "VIEW"})
	info, err = c.GetPrimaryKeys(ctx, flightsql.TableRef{Table: "orders"})
	check("primary keys", info, err, []string{"spice|public|orders|id|1|(null)"})
	info, err = c.GetPrimaryKeys(ctx, flightsql.TableRef{Table: "rankings"})
	check("primary keys of a view", info, err, nil)

	info, err = c.GetSqlInfo(ctx, []flightsql.SqlInfo{
		flightsql.SqlInfoFlightSqlServerName,
		flightsql.SqlInfoFlightSqlServerVersion,
		flightsql.SqlInfoFlightSqlServerReadOnly,
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := doGet(t, c, info)
	want := []string{
		`0|[0,"` + flightsrv.DefaultServerName + `"]`,
		`1|[0,"1.2.3"]`,
		`3|[1,true]`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("sql info=%q, want %q", got, want)
	}
}

func TestClientGetSchema(t *testing.T) {
	r := newRecipe(t, nil, nil)
	c := newClient(t, r.srv)
	ctx := testContext(t)
	res, err := c.GetExecuteSchema(ctx, "select name, count from rankings -- no semicolon\n")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := flight.DeserializeSchema(res.Schema, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fieldNames(schema), []string{"name", "count"}; !slices.Equal(got, want) {
		t.Errorf("fields=%q, want %q", got, want)
	}
}
