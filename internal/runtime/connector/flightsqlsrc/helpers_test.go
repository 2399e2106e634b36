//go:build duckdb_arrow

package flightsqlsrc_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/flightsqlsrc"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
)

const rankingsQuery = "select name, count from rankings order by count desc limit 5"

var (
	wantRankings        = []string{"nintendo|30", "the most delicious chocalate|20", "the most beautiful flower|10"}
	wantChangedRankings = []string{"the most beautiful flower|35", "nintendo|30", "the most delicious chocalate|20"}
)

// upstream is runtime 1 of the recipe behind a Flight server.
type upstream struct {
	mem      *memory.CheckedAllocator
	engine   *engine.Engine
	srv      *flightsrv.Server
	products *runtimetest.Source
	orders   *runtimetest.Source
}

// newUpstream starts it; configure, when given, adjusts the server (keys, TLS).
func newUpstream(t *testing.T, configure ...func(*flightsrv.Server)) *upstream {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	u := &upstream{mem: mem}
	u.products, u.orders = runtimetest.RecipeSources(t, mem, 100)
	u.engine = runtimetest.NewEngine(t, runtimetest.RecipePod,
		map[string]engine.Source{"products": u.products, "orders": u.orders}, nil)
	runtimetest.WaitReady(t, u.engine)
	var cfg func(*flightsrv.Server)
	if len(configure) > 0 {
		cfg = configure[0]
	}
	u.srv = runtimetest.StartServer(t, u.engine, mem, cfg)
	return u
}

// change adds an order at pos (25 flowers, then more with every call) and
// refreshes both datasets.
func (u *upstream) change(t *testing.T, pos position.LSN, extra int) {
	t.Helper()
	u.products.Set(t, pos,
		[]any{1, "the most beautiful flower"},
		[]any{2, "the most delicious chocalate"},
		[]any{3, "nintendo"})
	u.orders.Set(t, pos, []any{1, 1, 10}, []any{2, 2, 20}, []any{3, 3, 30}, []any{4, 1, 25 + extra})
	for _, name := range []string{"products", "orders"} {
		if err := u.engine.Refresh(name); err != nil {
			t.Fatal(err)
		}
	}
	runtimetest.WaitWatermark(t, u.engine, "rankings", pos)
}

// newSource returns an open flightsql source of table at endpoint whose Arrow
// memory is checked at the end of the test.
func newSource(t *testing.T, params map[string]string, table string) *flightsqlsrc.Source {
	t.Helper()
	cfg, err := flightsqlsrc.ParseParams(params)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	src := flightsqlsrc.NewSource(cfg, table)
	src.Allocator = mem
	src.MaxBackoff = 200 * 1e6 // 200ms
	if err := src.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	return src
}

// query runs sql on e and renders the rows as "v1|v2".
func query(t *testing.T, e *engine.Engine, sql string) ([]string, position.LSN) {
	t.Helper()
	rows, pos, _ := queryCache(t, e, sql)
	return rows, pos
}

// queryCache is query that also returns the results cache status.
func queryCache(t *testing.T, e *engine.Engine, sql string) ([]string, position.LSN, engine.CacheStatus) {
	t.Helper()
	res, err := e.Query(context.Background(), engine.Query{SQL: sql})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer res.Release()
	var out []string
	for _, rec := range res.Records {
		for i := 0; i < int(rec.NumRows()); i++ {
			vals := make([]string, rec.NumCols())
			for j, col := range rec.Columns() {
				vals[j] = strings.Clone(col.ValueStr(i))
			}
			out = append(out, strings.Join(vals, "|"))
		}
	}
	return out, res.Position, res.Cache
}

// scan reads a source whole.
func scan(t *testing.T, src engine.Source, req engine.ScanRequest) ([]string, []string, position.LSN, error) {
	t.Helper()
	var rows, fields []string
	var pos position.LSN
	err := src.Scan(context.Background(), req, func(s engine.Snapshot) error {
		pos = s.Position
		for _, f := range s.Reader.Schema().Fields() {
			fields = append(fields, f.Name)
		}
		for s.Reader.Next() {
			rec := s.Reader.RecordBatch()
			for i := 0; i < int(rec.NumRows()); i++ {
				vals := make([]string, rec.NumCols())
				for j, col := range rec.Columns() {
					vals[j] = strings.Clone(col.ValueStr(i))
				}
				rows = append(rows, strings.Join(vals, "|"))
			}
		}
		return s.Reader.Err()
	})
	return rows, fields, pos, err
}

func equal(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }
