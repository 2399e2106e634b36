//go:build duckdb_arrow

// Package runtimetest gives tests of the engine, the HTTP and Flight servers and
// the connectors that chain runtimes a real engine without Docker: in-memory
// DuckDB, datasets fed by Source (fixed Arrow records at a position, which can
// fail or hold scans on demand), views from a spicepod, and a Flight server on a
// free local port.
package runtimetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// Timeout bounds every wait of these helpers.
const Timeout = 30 * time.Second

// Schemas of the recipe's tables, as the Postgres connector reads them.
var (
	ProductsSchema = arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "name", Type: arrow.BinaryTypes.String},
	}, nil)
	OrdersSchema = arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "product_id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "count", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
)

// RankingsSQL is the recipe's view, as spicepods/accelerated spells it.
const RankingsSQL = `with a as (SELECT products.id, sum(count) as count FROM orders INNER JOIN products
ON orders.product_id = products.id GROUP BY products.id)
select name, count from products left join a on products.id = a.id
order by count desc nulls last, name limit 5`

// RecipePod is runtime 1 of the recipe with test: sources for products and orders.
const RecipePod = `version: v1
kind: Spicepod
name: sample
datasets:
  - from: test:products
    name: products
    acceleration: {enabled: true}
  - from: test:orders
    name: orders
    acceleration: {enabled: true}
views:
  - name: rankings
    sql: |
      with a as (SELECT products.id, sum(count) as count FROM orders INNER JOIN products
      ON orders.product_id = products.id GROUP BY products.id)
      select name, count from products left join a on products.id = a.id
      order by count desc nulls last, name limit 5
`

// NewEngine opens an engine over in-memory DuckDB running the spicepod pod, whose
// datasets read from sources by name (nil for datasets without one). configure,
// when not nil, adjusts the engine before it opens. The engine closes at the end
// of the test.
func NewEngine(tb testing.TB, pod string, sources map[string]engine.Source, configure func(*engine.Engine)) *engine.Engine {
	tb.Helper()
	e, _ := NewEngineStore(tb, pod, sources, configure)
	return e
}

// NewEngineStore is NewEngine that also returns the engine's store, wired as
// the runtime wires it (introspection lists the engine's datasets and views).
func NewEngineStore(tb testing.TB, pod string, sources map[string]engine.Source, configure func(*engine.Engine)) (*engine.Engine, *duckdb.DB) {
	tb.Helper()
	ctx := context.Background()
	p, err := spicepod.Parse([]byte(pod), "spicepod.yaml", func(string) (string, bool) { return "", false })
	if err != nil {
		tb.Fatalf("parse spicepod: %v", err)
	}
	db := duckdb.New("")
	db.Threads = 1
	if err := db.Open(ctx); err != nil {
		tb.Fatalf("open duckdb: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	e := engine.New(db)
	db.Relations = e.Tables
	e.MaxBackoff = 500 * time.Millisecond
	for _, ds := range p.Datasets {
		if err := e.AddDataset(ds, sources[ds.Name]); err != nil {
			tb.Fatal(err)
		}
	}
	for _, v := range p.Views {
		if err := e.AddView(v); err != nil {
			tb.Fatal(err)
		}
	}
	if configure != nil {
		configure(e)
	}
	if err := e.Open(ctx); err != nil {
		tb.Fatalf("open engine: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), Timeout)
		defer cancel()
		if err := e.Close(ctx); err != nil {
			tb.Errorf("close engine: %v", err)
		}
	})
	return e, db
}

// WaitFor waits until cond holds, checking after every change of the engine's
// state, and fails the test after Timeout.
func WaitFor(tb testing.TB, e *engine.Engine, what string, cond func() bool) {
	tb.Helper()
	deadline := time.After(Timeout)
	for {
		changed := e.Changed()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-time.After(50 * time.Millisecond): // conditions outside the engine
		case <-deadline:
			tb.Fatalf("timed out after %s waiting for %s", Timeout, what)
		}
	}
}

// WaitReady waits until every dataset and view of e has loaded.
func WaitReady(tb testing.TB, e *engine.Engine) {
	tb.Helper()
	WaitFor(tb, e, "the engine to be ready", e.Ready)
}

// WaitWatermark waits until the named dataset or view reflects at least pos.
func WaitWatermark(tb testing.TB, e *engine.Engine, name string, pos position.LSN) {
	tb.Helper()
	WaitFor(tb, e, fmt.Sprintf("%s to reach %s", name, pos), func() bool {
		wm, err := e.Watermark(name)
		return err == nil && wm >= pos
	})
}

// StartServer opens a Flight server for e on a free local port, allocating from
// mem, and closes it at the end of the test. configure, when not nil, adjusts the
// server before it opens.
func StartServer(tb testing.TB, e flightsrv.Engine, mem memory.Allocator, configure func(*flightsrv.Server)) *flightsrv.Server {
	tb.Helper()
	return StartServerAt(tb, "127.0.0.1:0", e, mem, configure)
}

// StartServerAt is StartServer on a given address (to restart on the same port).
func StartServerAt(tb testing.TB, addr string, e flightsrv.Engine, mem memory.Allocator, configure func(*flightsrv.Server)) *flightsrv.Server {
	tb.Helper()
	srv := flightsrv.New(addr, e)
	srv.Allocator = mem
	if configure != nil {
		configure(srv)
	}
	if err := srv.Open(); err != nil {
		tb.Fatalf("open flight server: %v", err)
	}
	tb.Cleanup(func() { StopServer(tb, srv) })
	return srv
}

// StopServer closes srv, failing the test when it does not stop in time. Closing
// twice is harmless.
func StopServer(tb testing.TB, srv *flightsrv.Server) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		tb.Errorf("close flight server: %v", err)
	}
}

// RecipeSources returns sources for the recipe's products and orders, loaded with
// the three products and one order each at position pos.
func RecipeSources(tb testing.TB, mem memory.Allocator, pos position.LSN) (products, orders *Source) {
	products = NewSource(tb, mem, ProductsSchema)
	products.Set(tb, pos,
		[]any{1, "the most beautiful flower"},
		[]any{2, "the most delicious chocalate"},
		[]any{3, "nintendo"})
	orders = NewSource(tb, mem, OrdersSchema)
	orders.Set(tb, pos, []any{1, 1, 10}, []any{2, 2, 20}, []any{3, 3, 30})
	return products, orders
}
