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
// Flight server (the recipe's data at position 0/100) and reads them through the
// api's real wiring.
func TestRanking_RealRuntime(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	products, orders := runtimetest.RecipeSources(t, mem, 0x100)
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
		if got, want := a.header.Get("Spice-Position"), "0/100"; got != want {
			t.Fatalf("%s: Spice-Position=%q, want %q", path, got, want)
		}
		if got := a.header.Get("Results-Cache-Status"); got == "" {
			t.Fatalf("%s: no Results-Cache-Status", path)
		}
	}

	// Postgres is at head; the runtime, at 0/100, waits for it and times out.
	head := mustLSN(t, m)
	a := do(t, m, "GET", "/ranking-accelerated", "", "Spice-Min-Position", head.String())
	if a.status != http.StatusGatewayTimeout {
		t.Fatalf("status=%d, want 504: %s", a.status, a.body)
	}
	if msg, want := errorOf(t, a), "accelerated runtime at "+srv.Addr()+" did not answer in time: position "+head.String()+" not reached"; !strings.HasPrefix(msg, want) {
		t.Fatalf("error=%q, want prefix %q", msg, want)
	}

	// A position Postgres has not reached is refused at once, as /ranking
	// refuses it, on both runtime paths: no runtime waits for it.
	future := (head + 1<<30).String()
	for _, path := range []string{"/ranking", "/ranking-accelerated", "/ranking-materialized"} {
		a = do(t, m, "GET", path, "", "Spice-Min-Position", future)
		if a.status != http.StatusUnprocessableEntity || !strings.Contains(errorOf(t, a), "ahead of postgres") {
			t.Fatalf("%s with a future position: %d %s, want 422 saying it is ahead of postgres", path, a.status, a.body)
		}
	}

	a = do(t, m, "GET", "/readyz", "")
	var r struct{ Status string }
	if err := json.Unmarshal([]byte(a.body), &r); err != nil || a.status != http.StatusOK || r.Status != "ready" {
		t.Fatalf("readyz=%d %s, want 200 ready", a.status, a.body)
	}
}
