//go:build duckdb_arrow

package main_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

// TestRanking_RealRuntime serves both runtime endpoints from our real engine and
// Flight server (the recipe's data at position 1/100) and reads them through the
// api's real wiring.
func TestRanking_RealRuntime(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	products, orders := runtimetest.RecipeSources(t, mem, 0x1_0000_0100)
	e := runtimetest.NewEngine(t, runtimetest.RecipePod,
		map[string]engine.Source{"products": products, "orders": orders},
		func(e *engine.Engine) { e.MinPositionTimeout = 100 * time.Millisecond })
	runtimetest.WaitReady(t, e)
	srv := runtimetest.StartServer(t, e, mem, nil)

	m := MustRunMain(t, map[string]string{
		"ACCELERATED_FLIGHT_ADDR":  srv.Addr(),
		"MATERIALIZED_FLIGHT_ADDR": srv.Addr(),
	})
	want := "==== Leading Products ====\n" +
		"        30 sold: nintendo\n" +
		"        20 sold: the most delicious chocalate\n" +
		"        10 sold: the most beautiful flower\n"
	for _, path := range []string{"/ranking-accelerated", "/ranking-materialized"} {
		a := do(t, m, "GET", path, "")
		if a.status != http.StatusOK || a.body != want {
			t.Fatalf("%s: %d\n%s\nwant 200\n%s", path, a.status, a.body, want)
		}
		if got, want := a.header.Get("Spice-Position"), "1/100"; got != want {
			t.Fatalf("%s: Spice-Position=%q, want %q", path, got, want)
		}
		if got := a.header.Get("Results-Cache-Status"); got == "" {
			t.Fatalf("%s: no Results-Cache-Status", path)
		}
	}

	a := do(t, m, "GET", "/ranking-accelerated", "", "Spice-Min-Position", "1/101")
	if a.status != http.StatusGatewayTimeout {
		t.Fatalf("status=%d, want 504: %s", a.status, a.body)
	}
	if msg, want := errorOf(t, a), "accelerated runtime at "+srv.Addr()+" did not answer in time: position 1/101 not reached"; !strings.HasPrefix(msg, want) {
		t.Fatalf("error=%q, want prefix %q", msg, want)
	}

	a = do(t, m, "GET", "/readyz", "")
	var r struct{ Status string }
	if err := json.Unmarshal([]byte(a.body), &r); err != nil || a.status != http.StatusOK || r.Status != "ready" {
		t.Fatalf("readyz=%d %s, want 200 ready", a.status, a.body)
	}
}
