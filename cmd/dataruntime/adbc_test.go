//go:build duckdb_arrow

package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	adbcflightsql "github.com/apache/arrow-adbc/go/adbc/driver/flightsql"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestADBCAgainstTheChain runs a third-party generic client, the ADBC Flight
// SQL driver, unchanged against both runtimes of the recipe's chain (runtime 1
// on Postgres by logical replication, runtime 2 subscribed to its rankings):
// a query, prepared statements with ? and $1 parameters, the metadata calls,
// SHOW TABLES, DESCRIBE, a catalog-qualified name, and on runtime 2 a plain
// SELECT * of rankings in the ranking's order.
func TestADBCAgainstTheChain(t *testing.T) {
	dsn, params := MustDatabase(t, pg.Get(t), recipeSchema)
	a := MustRuntime(t, strings.ReplaceAll(recipePod(params, "1s"), "refresh_check_interval: 1s", "refresh_mode: changes"))
	a.waitReady(t)
	b := MustRuntime(t, fmt.Sprintf(`version: v1
kind: Spicepod
name: materialized
datasets:
  - from: flightsql:rankings
    name: rankings
    params: {flightsql_endpoint: http://%s}
    acceleration: {enabled: true, refresh_mode: changes}
`, a.Flight.Addr()))
	b.waitReady(t)
	// Changes reach runtime 2 as diffs, which leave its rows out of the
	// ranking's order: Tablet climbs from third to first.
	mustWrite(t, dsn, "INSERT INTO orders (product_id, count) VALUES (3, 50)")
	token := mustWrite(t, dsn, "INSERT INTO orders (product_id, count) VALUES (1, 1)")
	want := pgRows(t, dsn, rankingSQL)
	if got := b.query(t, "SELECT 1 FROM rankings LIMIT 1", token); got.code != 200 {
		t.Fatalf("runtime 2 did not reach the writes: %d %s", got.code, got.body)
	}

	for _, rt := range []struct {
		name   string
		r      *runtime
		tables []string
		shown  []string // SHOW TABLES
	}{
		{"runtime 1", a, []string{"orders", "products", "rankings"},
			[]string{"spice:public:orders:BASE TABLE", "spice:public:products:BASE TABLE", "spice:public:rankings:VIEW"}},
		{"runtime 2", b, []string{"rankings"}, []string{"spice:public:rankings:BASE TABLE"}},
	} {
		t.Run(rt.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			cnxn := openADBC(t, mem, rt.r.Flight.Addr())
			ctx := context.Background()

			if got := adbcQuery(t, cnxn, "SELECT name, count FROM rankings ORDER BY count DESC NULLS LAST, name"); !slices.Equal(got, want) {
				t.Fatalf("query = %v, want %v", got, want)
			}
			if got := adbcQuery(t, cnxn, "SELECT name, count FROM spice.public.rankings ORDER BY count DESC NULLS LAST, name"); !slices.Equal(got, want) {
				t.Fatalf("qualified query = %v, want %v", got, want)
			}
			for _, sql := range []string{"SELECT name, count FROM rankings WHERE name = ?", "SELECT name, count FROM rankings WHERE name = $1"} {
				if got := adbcPrepared(t, mem, cnxn, sql, "Laptop"); len(got) != 1 || got[0] != "Laptop:11" {
					t.Fatalf("prepared %s with Laptop = %v, want [Laptop:11]", sql, got)
				}
			}
			if shown := adbcQuery(t, cnxn, "show tables"); !slices.Equal(shown, rt.shown) { // as upstream's REPL suggests it
				t.Fatalf("show tables = %v, want %v", shown, rt.shown)
			}
			if got := adbcQuery(t, cnxn, "DESCRIBE rankings"); !slices.Equal(got, []string{"name:VARCHAR:YES", "count:BIGINT:YES"}) {
				t.Fatalf("DESCRIBE rankings = %v", got)
			}
			objects := adbcObjects(t, cnxn)
			if !slices.Equal(objects, prefixed("spice.public.", rt.tables)) {
				t.Fatalf("GetObjects = %v, want %v", objects, rt.tables)
			}
			catalog, schema := "spice", "public"
			s, err := cnxn.GetTableSchema(ctx, &catalog, &schema, "rankings")
			if err != nil || s.NumFields() != 2 || s.Field(0).Name != "name" || s.Field(1).Name != "count" {
				t.Fatalf("GetTableSchema(rankings) = %v, %v; want name and count", s, err)
			}
			if md, _ := s.Field(1).Metadata.GetValue("ARROW:FLIGHT:SQL:TYPE_NAME"); md != "BIGINT" {
				t.Errorf("GetTableSchema count TYPE_NAME = %q, want BIGINT", md)
			}
			if types := adbcRows(t, must(cnxn.GetTableTypes(ctx))); !slices.Contains(types, "BASE TABLE") || !slices.Contains(types, "VIEW") {
				t.Errorf("GetTableTypes = %v, want BASE TABLE and VIEW", types)
			}
			if info := adbcRows(t, must(cnxn.GetInfo(ctx, []adbc.InfoCode{adbc.InfoVendorName, adbc.InfoVendorSql}))); len(info) != 2 {
				t.Errorf("GetInfo(vendor name, vendor sql) = %v, want both answered", info)
			}
		})
	}
	// A reader of runtime 2's table without ORDER BY gets the ranking, as
	// from upstream's refreshed table.
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	cnxn := openADBC(t, mem, b.Flight.Addr())
	if got := adbcQuery(t, cnxn, "SELECT * FROM rankings"); !slices.Equal(got, want) {
		t.Fatalf("runtime 2 SELECT * FROM rankings = %v, want the ranking's order %v", got, want)
	}
}

func openADBC(t *testing.T, mem memory.Allocator, addr string) adbc.Connection {
	t.Helper()
	db, err := adbcflightsql.NewDriver(mem).NewDatabase(map[string]string{adbc.OptionKeyURI: "grpc://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	cnxn, err := db.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cnxn.Close()
		db.Close()
	})
	return cnxn
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// adbcQuery runs sql and returns its rows, values joined by ":".
func adbcQuery(t *testing.T, cnxn adbc.Connection, sql string) []string {
	t.Helper()
	st, err := cnxn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery(sql); err != nil {
		t.Fatal(err)
	}
	rdr, _, err := st.ExecuteQuery(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return adbcRows(t, rdr)
}

// adbcPrepared prepares sql, binds one string parameter and runs it.
func adbcPrepared(t *testing.T, mem memory.Allocator, cnxn adbc.Connection, sql, param string) []string {
	t.Helper()
	st, err := cnxn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetSqlQuery(sql); err != nil {
		t.Fatal(err)
	}
	if err := st.Prepare(context.Background()); err != nil {
		t.Fatalf("prepare %s: %v", sql, err)
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema([]arrow.Field{{Name: "1", Type: arrow.BinaryTypes.String, Nullable: true}}, nil))
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append(param)
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := st.Bind(context.Background(), rec); err != nil {
		t.Fatalf("bind %s: %v", sql, err)
	}
	rdr, _, err := st.ExecuteQuery(context.Background())
	if err != nil {
		t.Fatalf("execute %s: %v", sql, err)
	}
	return adbcRows(t, rdr)
}

// adbcObjects lists the tables GetObjects reports as catalog.schema.table.
func adbcObjects(t *testing.T, cnxn adbc.Connection) []string {
	t.Helper()
	rdr, err := cnxn.GetObjects(context.Background(), adbc.ObjectDepthTables, nil, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var out []string
	for rdr.Next() {
		rec := rdr.RecordBatch()
		cats := rec.Column(0).(*array.String)
		schemas := rec.Column(1).(*array.List)
		for i := 0; i < int(rec.NumRows()); i++ {
			start, end := schemas.ValueOffsets(i)
			st := schemas.ListValues().(*array.Struct)
			for j := start; j < end; j++ {
				name := st.Field(0).(*array.String).Value(int(j))
				tables := st.Field(1).(*array.List)
				ts, te := tables.ValueOffsets(int(j))
				tt := tables.ListValues().(*array.Struct)
				for k := ts; k < te; k++ {
					out = append(out, cats.Value(i)+"."+name+"."+tt.Field(0).(*array.String).Value(int(k)))
				}
			}
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// adbcRows returns a reader's rows, values joined by ":" (null as "null"),
// and releases it.
func adbcRows(t *testing.T, rdr array.RecordReader) []string {
	t.Helper()
	defer rdr.Release()
	var out []string
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			var vals []string
			for _, c := range rec.Columns() {
				if c.IsNull(i) {
					vals = append(vals, "null")
					continue
				}
				vals = append(vals, strings.Clone(c.ValueStr(i)))
			}
			out = append(out, strings.Join(vals, ":"))
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func prefixed(prefix string, names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, prefix+n)
	}
	return out
}
