//go:build duckdb_arrow

package flightsrv_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

var _ flightsrv.Engine = (*engine.Engine)(nil)

// The recipe's rankings at the initial data.
var wantRankings = []string{"nintendo|30", "the most delicious chocalate|20", "the most beautiful flower|10"}

// recipe is runtime 1 of the recipe behind a Flight server.
type recipe struct {
	mem      *memory.CheckedAllocator // the server's
	engine   *engine.Engine
	srv      *flightsrv.Server
	products *runtimetest.Source
	orders   *runtimetest.Source
}

// newRecipe starts the recipe's runtime 1 at position 0/64, loaded, with every
// Arrow allocation of the server and the sources checked at the end of the test.
func newRecipe(t *testing.T, configureEngine func(*engine.Engine), configureServer func(*flightsrv.Server)) *recipe {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) }) // runs last
	r := &recipe{mem: mem}
	r.products, r.orders = runtimetest.RecipeSources(t, mem, 100)
	r.engine = runtimetest.NewEngine(t, runtimetest.RecipePod,
		map[string]engine.Source{"products": r.products, "orders": r.orders}, configureEngine)
	runtimetest.WaitReady(t, r.engine)
	r.srv = runtimetest.StartServer(t, r.engine, mem, configureServer)
	return r
}

// newClient returns a Flight SQL client of srv whose allocations are checked at
// the end of the test.
func newClient(t *testing.T, srv *flightsrv.Server) *flightsql.Client {
	t.Helper()
	c, err := flightsql.NewClient(srv.Addr(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	c.Alloc = mem
	t.Cleanup(func() {
		c.Close()
		mem.AssertSize(t, 0)
	})
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), runtimetest.Timeout)
	t.Cleanup(cancel)
	return ctx
}

// rows renders every row of rd as "v1|v2|...".
func rows(t *testing.T, rd array.RecordReader) []string {
	t.Helper()
	var out []string
	for rd.Next() {
		out = append(out, recordRows(rd.RecordBatch())...)
	}
	if err := rd.Err(); err != nil {
		t.Fatalf("read rows: %v", err)
	}
	return out
}

func recordRows(rec arrow.RecordBatch) []string {
	var out []string
	for i := 0; i < int(rec.NumRows()); i++ {
		vals := make([]string, rec.NumCols())
		for j, col := range rec.Columns() {
			vals[j] = strings.Clone(col.ValueStr(i))
		}
		out = append(out, strings.Join(vals, "|"))
	}
	return out
}

func fieldNames(s *arrow.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Name)
	}
	return out
}

func equal(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

// wantCode fails unless err is a gRPC status with code and a message containing
// every one of parts.
func wantCode(t *testing.T, err error, code codes.Code, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	st, _ := status.FromError(err)
	if got := st.Code(); got != code {
		t.Fatalf("code=%s (%v), want %s", got, err, code)
	}
	for _, p := range parts {
		if !strings.Contains(st.Message(), p) {
			t.Errorf("message %q does not mention %q", st.Message(), p)
		}
	}
}

// positionOf reads the spice-position of response headers.
func positionOf(t *testing.T, md interface{ Get(string) []string }) position.LSN {
	t.Helper()
	v := md.Get(wire.MetadataPosition)
	if len(v) != 1 {
		t.Fatalf("%s=%q, want one value", wire.MetadataPosition, v)
	}
	lsn, err := position.Parse(v[0])
	if err != nil {
		t.Fatal(err)
	}
	return lsn
}

// changeOrders adds an order of 25 flowers at pos, as a new Postgres commit would,
// and refreshes both datasets (their position moves together).
func (r *recipe) changeOrders(t *testing.T, pos position.LSN) {
	t.Helper()
	r.products.Set(t, pos,
		[]any{1, "the most beautiful flower"},
		[]any{2, "the most delicious chocalate"},
		[]any{3, "nintendo"})
	r.orders.Set(t, pos, []any{1, 1, 10}, []any{2, 2, 20}, []any{3, 3, 30}, []any{4, 1, 25})
	for _, name := range []string{"products", "orders"} {
		if err := r.engine.Refresh(name); err != nil {
			t.Fatal(err)
		}
	}
	runtimetest.WaitWatermark(t, r.engine, "rankings", pos)
}

// The rankings after changeOrders.
var wantChangedRankings = []string{"the most beautiful flower|35", "nintendo|30", "the most delicious chocalate|20"}
