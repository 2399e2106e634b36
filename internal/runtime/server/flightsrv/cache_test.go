//go:build duckdb_arrow

package flightsrv_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// answer runs sql and returns the rows, the position and the cache status.
func answer(t *testing.T, ctx context.Context, c *flightsql.Client, sql string) ([]string, position.LSN, string) {
	t.Helper()
	var md metadata.MD
	info, err := c.Execute(ctx, sql, grpc.Header(&md))
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ := doGet(t, c, info)
	cache := md.Get(wire.MetadataCacheStatus)
	if len(cache) != 1 {
		t.Fatalf("%s=%q, want one value", wire.MetadataCacheStatus, cache)
	}
	return got, positionOf(t, md), cache[0]
}

// TestCacheNeverHidesAChange: with a results cache whose entries live a minute,
// a change to an input of a view is visible at once.
func TestCacheNeverHidesAChange(t *testing.T) {
	r := newRecipe(t, func(e *engine.Engine) { e.Cache = engine.NewCache(0, time.Minute) }, nil)
	c := newClient(t, r.srv)
	ctx := testContext(t)
	const q = "select name, count from rankings order by count desc limit 5"

	check := func(step string, wantRows []string, wantPos position.LSN, wantCache string) {
		t.Helper()
		got, pos, cache := answer(t, ctx, c, q)
		if !equal(got, wantRows) {
			t.Errorf("%s: rows=%q, want %q", step, got, wantRows)
		}
		if pos != wantPos {
			t.Errorf("%s: position=%s, want %s", step, pos, wantPos)
		}
		if cache != wantCache {
			t.Errorf("%s: cache=%s, want %s", step, cache, wantCache)
		}
	}
	check("first", wantRankings, 100, "MISS")
	check("again", wantRankings, 100, "HIT")
	r.changeOrders(t, 200)
	check("after a new order", wantChangedRankings, 200, "MISS")
	check("again after the order", wantChangedRankings, 200, "HIT")

	noCache := metadata.AppendToOutgoingContext(ctx, wire.MetadataCacheControl, "no-cache")
	if _, _, cache := answer(t, noCache, c, q); cache != "BYPASS" {
		t.Errorf("no-cache: cache=%s, want BYPASS", cache)
	}
}
