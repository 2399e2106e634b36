//go:build duckdb_arrow

package ranking_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

// recipeRuntime serves the recipe's runtime 1 (products, orders and the rankings
// view, in DuckDB) from our real engine and Flight server, its data at pos.
func recipeRuntime(t *testing.T, pos position.LSN, configure func(*engine.Engine)) (addr string, orders *runtimetest.Source) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	products, orders := runtimetest.RecipeSources(t, mem, pos)
	e := runtimetest.NewEngine(t, runtimetest.RecipePod,
		map[string]engine.Source{"products": products, "orders": orders}, configure)
	runtimetest.WaitReady(t, e)
	srv := runtimetest.StartServer(t, e, mem, nil)
	return srv.Addr(), orders
}

var recipeRows = []ranking.Row{
	{Name: "nintendo", Count: 30},
	{Name: "the most delicious chocalate", Count: 20},
	{Name: "the most beautiful flower", Count: 10},
}

func TestFlight_RealRuntime(t *testing.T) {
	const pos = position.LSN(0x1_0000_0100)
	cache := engine.NewCache(1<<20, time.Minute)
	addr, _ := recipeRuntime(t, pos, func(e *engine.Engine) { e.Cache = cache })
	for _, query := range []string{ranking.AcceleratedQuery, ranking.MaterializedQuery} {
		for _, protocol := range protocols {
			cache.Clear() // so that each first answer is a MISS
			f2 := MustOpenQuery(t, addr, query, protocol)

			res, err := f2.Ranking(context.Background(), ranking.Request{MinPosition: pos})
			if err != nil {
				t.Fatal(err)
			}
			if !equalRows(res.Rows, recipeRows) {
				t.Fatalf("%s over %s: rows=%v, want %v", query, protocol, res.Rows, recipeRows)
			}
			if got, want := res.Position, pos; got != want {
				t.Fatalf("%s: position=%s, want %s", protocol, got, want)
			}
			if got, want := res.CacheStatus, "MISS"; got != want {
				t.Fatalf("%s: first answer's cache status=%q, want %q", protocol, got, want)
			}
			res, err = f2.Ranking(context.Background(), ranking.Request{})
			if err != nil || res.CacheStatus != "HIT" || !equalRows(res.Rows, recipeRows) {
				t.Fatalf("%s: second answer: %v, cache %q, err %v; want a HIT", protocol, res.Rows, res.CacheStatus, err)
			}
			res, err = f2.Ranking(context.Background(), ranking.Request{NoCache: true})
			if err != nil || res.CacheStatus != "BYPASS" {
				t.Fatalf("%s: no-cache answer: cache %q, err %v; want BYPASS", protocol, res.CacheStatus, err)
			}
		}
	}
}

func TestFlight_RealRuntime_MinPositionNotReached(t *testing.T) {
	const pos = position.LSN(0x100)
	addr, _ := recipeRuntime(t, pos, func(e *engine.Engine) { e.MinPositionTimeout = 100 * time.Millisecond })
	f := MustOpen(t, addr)
	_, err := f.Ranking(context.Background(), ranking.Request{MinPosition: pos + 1})
	if !errors.Is(err, ranking.ErrTimeout) {
		t.Fatalf("err=%v, want ErrTimeout", err)
	}
	if want := "accelerated runtime at " + addr + " did not answer in time: position 0/101 not reached"; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err=%q, want prefix %q", err, want)
	}
}

func TestFlight_RealRuntime_NotReady(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	products, orders := runtimetest.RecipeSources(t, mem, 0x100)
	orders.Fail(errors.New("postgres is down"))
	e := runtimetest.NewEngine(t, runtimetest.RecipePod,
		map[string]engine.Source{"products": products, "orders": orders}, nil)
	srv := runtimetest.StartServer(t, e, mem, nil)

	f := MustOpen(t, srv.Addr())
	_, err := f.Ranking(context.Background(), ranking.Request{})
	if !errors.Is(err, ranking.ErrUnavailable) {
		t.Fatalf("err=%v, want ErrUnavailable", err)
	}
	// The engine names the first input it finds not ready: orders (failing) or,
	// while its first load is still running, products.
	if want := "is not ready"; !strings.Contains(err.Error(), want) {
		t.Fatalf("err=%q, want it to contain %q", err, want)
	}
}
