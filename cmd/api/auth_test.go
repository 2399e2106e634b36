//go:build duckdb_arrow

package main_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
)

// TestRanking_RuntimeWithAPIKeys: the api sends ACCELERATED_API_KEY and
// MATERIALIZED_API_KEY to runtimes that require keys; without them the
// runtime's refusal reaches the client.
func TestRanking_RuntimeWithAPIKeys(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	products, orders := runtimetest.RecipeSources(t, mem, 0x100)
	e := runtimetest.NewEngine(t, runtimetest.RecipePod,
		map[string]engine.Source{"products": products, "orders": orders}, nil)
	runtimetest.WaitReady(t, e)
	acc := runtimetest.StartServer(t, e, mem, func(s *flightsrv.Server) { s.APIKeys = apikey.ReadOnlyKeys("acc-key") })
	mat := runtimetest.StartServer(t, e, mem, func(s *flightsrv.Server) { s.APIKeys = apikey.ReadOnlyKeys("mat-key") })

	m := MustRunMain(t, map[string]string{
		"ACCELERATED_FLIGHT_ADDR":  acc.Addr(),
		"MATERIALIZED_FLIGHT_ADDR": mat.Addr(),
		"ACCELERATED_API_KEY":      "acc-key",
		"MATERIALIZED_API_KEY":     "mat-key",
	})
	for _, path := range []string{"/ranking-accelerated", "/ranking-materialized"} {
		if a := do(t, m, "GET", path, ""); a.status != http.StatusOK || !strings.Contains(a.body, "nintendo") {
			t.Errorf("%s with keys: %d %s, want 200", path, a.status, a.body)
		}
	}

	// Keys swapped: each runtime refuses the other's.
	m = MustRunMain(t, map[string]string{
		"ACCELERATED_FLIGHT_ADDR":  acc.Addr(),
		"MATERIALIZED_FLIGHT_ADDR": mat.Addr(),
		"ACCELERATED_API_KEY":      "mat-key",
	})
	for _, path := range []string{"/ranking-accelerated", "/ranking-materialized"} {
		a := do(t, m, "GET", path, "")
		if a.status == http.StatusOK || !strings.Contains(errorOf(t, a), "Unauthenticated") {
			t.Errorf("%s with a wrong or no key: %d %s, want an error saying Unauthenticated", path, a.status, a.body)
		}
	}
}
