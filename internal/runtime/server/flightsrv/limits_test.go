//go:build duckdb_arrow

package flightsrv_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
)

// Limits map to their own gRPC codes.
func TestErrorLimits(t *testing.T) {
	r := newRecipe(t, func(e *engine.Engine) {
		e.MaxResultBytes = 1 << 10
		e.QueryTimeout = 300 * time.Millisecond
		e.MaxQueryBytes = 4 << 10
	}, nil)
	c := newClient(t, r.srv)
	ctx := testContext(t)

	_, err := c.Execute(ctx, "SELECT range FROM range(100000)")
	wantCode(t, err, codes.ResourceExhausted, "LIMIT")

	_, err = c.Execute(ctx, "SELECT sum(hash(range)) FROM range(1000000000000)")
	wantCode(t, err, codes.DeadlineExceeded, "cheaper")

	// Flight takes the same query length limit as HTTP.
	_, err = c.Execute(ctx, "SELECT '"+strings.Repeat("x", 8<<10)+"'")
	wantCode(t, err, codes.ResourceExhausted, "shorter")

	_, err = c.Execute(ctx, "SELECT * FROM _spice.watermarks")
	wantCode(t, err, codes.InvalidArgument, "internal")
}

// Distinct large query texts over Flight, executed and prepared, stay within
// the engine's and the server's limits.
func TestQueryTextFloodStaysWithinLimits(t *testing.T) {
	const limit = 1 << 20
	r := newRecipe(t, func(e *engine.Engine) {
		e.PlanCacheBytes = limit
		e.Cache = engine.NewCache(limit, time.Minute)
	}, func(s *flightsrv.Server) {
		s.MaxTicketBytes = limit
		s.MaxPreparedBytes = limit
	})
	c := newClient(t, r.srv)
	ctx := testContext(t)
	for i := 0; i < 30; i++ {
		sql := fmt.Sprintf("SELECT %d %s AS x", i, strings.Repeat(" ", 100<<10))
		info, err := c.Execute(ctx, sql) // holds a ticket
		if err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
		_ = info
		st, err := c.Prepare(ctx, sql+" ")
		if err != nil {
			t.Fatalf("prepare %d: %v", i, err)
		}
		_ = st // left open: the server must bound what it holds
	}
	if got := r.engine.PlanBytes(); got > limit {
		t.Fatalf("plan cache holds %d bytes, want <= %d", got, limit)
	}
	if got := r.engine.Cache.Bytes(); got > limit {
		t.Fatalf("results cache holds %d bytes, want <= %d", got, limit)
	}
	if got := r.srv.HeldBytes(); got > 2*limit || got < 100<<10 {
		t.Fatalf("flight server holds %d bytes, want 100 KiB <= bytes <= %d", got, 2*limit)
	}
}
