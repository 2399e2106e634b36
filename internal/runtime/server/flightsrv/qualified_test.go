//go:build duckdb_arrow

package flightsrv_test

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

// qualifiedPod names datasets with a schema, as upstream spicepods do
// (spiceai.files, Sales.Customer); a view reads them.
const qualifiedPod = `version: v1
kind: Spicepod
name: qualified
datasets:
  - from: test:files
    name: spiceai.files
    acceleration: {enabled: true}
  - from: test:customer
    name: Sales.Customer
    acceleration: {enabled: true, refresh_mode: append, refresh_check_interval: 1h}
    time_column: id
views:
  - name: reports.total
    sql: select count(*) as n from spiceai.files join "Sales"."Customer" c on true
    acceleration: {enabled: true}
`

func TestQualifiedDatasetNames(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	files, customers := runtimetest.RecipeSources(t, mem, 64)
	e := runtimetest.NewEngine(t, qualifiedPod, map[string]engine.Source{"spiceai.files": files, "Sales.Customer": customers}, nil)
	runtimetest.WaitReady(t, e)
	srv := runtimetest.StartServer(t, e, mem, nil)
	c := newClient(t, srv)
	ctx := testContext(t)

	for _, tc := range []struct{ sql, want string }{
		{"select count(*) from spiceai.files", "3"},
		{`select count(*) from "Sales"."Customer"`, "3"},
		{"select count(*) from sales.customer", "3"},
		{"select n from reports.total", "9"},
	} {
		info, err := c.Execute(ctx, tc.sql)
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		got, _, _ := doGet(t, c, info)
		if !slices.Equal(got, []string{tc.want}) {
			t.Errorf("%s = %q, want %s", tc.sql, got, tc.want)
		}
	}
	// The position the answer reflects comes from the qualified dataset: it
	// is a dependency, not an unknown table.
	if wm, err := e.Watermark("Sales.Customer"); err != nil || wm != 64 {
		t.Errorf("watermark of Sales.Customer = %v, %v, want 64", wm, err)
	}

	info, err := c.GetTables(ctx, &flightsql.GetTablesOpts{})
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := doGet(t, c, info)
	want := []string{"spice|reports|total|VIEW", "spice|sales|customer|BASE TABLE", "spice|spiceai|files|BASE TABLE"}
	if !slices.Equal(got, want) {
		t.Errorf("tables=%q, want %q", got, want)
	}
	schema := "spiceai"
	info, err = c.GetTables(ctx, &flightsql.GetTablesOpts{DbSchemaFilterPattern: &schema})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := doGet(t, c, info); !slices.Equal(got, []string{"spice|spiceai|files|BASE TABLE"}) {
		t.Errorf("tables of schema spiceai=%q", got)
	}
	info, err = c.GetDBSchemas(ctx, &flightsql.GetDBSchemasOpts{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := doGet(t, c, info); !slices.Equal(got, []string{"spice|public", "spice|reports", "spice|sales", "spice|spiceai"}) {
		t.Errorf("schemas=%q", got)
	}
}
