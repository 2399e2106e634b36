//go:build duckdb_arrow

package engine_test

import (
	"errors"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

func productsPod(readyState string) string {
	return `version: v1
kind: Spicepod
name: readiness
datasets:
  - from: test:products
    name: products
    ready_state: ` + readyState + `
    acceleration: {enabled: true}
`
}

var threeProducts = []string{"1|the most beautiful flower", "2|the most delicious chocalate", "3|nintendo"}

// TestReadyState queries a dataset while its first load is held: on_load
// answers a NotReadyError naming it, on_registration reads the source (as
// upstream does: "queries fall back to the source until the initial acceleration
// is complete"). Both answer from the acceleration once loaded.
func TestReadyState(t *testing.T) {
	for _, tc := range []struct {
		readyState string
		wantErr    bool
	}{
		{readyState: "on_load", wantErr: true},
		{readyState: "on_registration", wantErr: false},
	} {
		t.Run(tc.readyState, func(t *testing.T) {
			mem := checkedMem(t)
			products, _ := runtimetest.RecipeSources(t, mem, 100)
			release := products.BlockNext(t, 1)
			e := runtimetest.NewEngine(t, productsPod(tc.readyState), map[string]engine.Source{"products": products}, nil)
			runtimetest.WaitFor(t, e, "the first load to start", func() bool { return products.Blocked() == 1 })
			if e.Ready() {
				t.Fatal("Ready() during the first load, want false")
			}
			if st := status(t, e, "products"); st.Ready || st.State != engine.StateInitializing {
				t.Fatalf("status during the first load = ready %v, state %s; want false, initializing", st.Ready, st.State)
			}

			res, err := e.Query(testContext(t), engine.Query{SQL: "SELECT id, name FROM products ORDER BY id"})
			if tc.wantErr {
				var nr *engine.NotReadyError
				if !errors.As(err, &nr) || !errors.Is(err, engine.ErrNotReady) {
					t.Fatalf("query before load: err = %v, want a NotReadyError", err)
				}
				if nr.Dataset != "products" || nr.State != engine.StateInitializing {
					t.Fatalf("NotReadyError = %+v, want dataset products, state initializing", nr)
				}
			} else {
				if err != nil {
					t.Fatalf("query before load: %v", err)
				}
				if got := rows(res); !equal(got, threeProducts) {
					t.Fatalf("query before load = %q, want the source's %q", got, threeProducts)
				}
			}

			release()
			runtimetest.WaitReady(t, e)
			scans := products.Scans()
			got, pos := mustQuery(t, e, "SELECT id, name FROM products ORDER BY id")
			if !equal(got, threeProducts) || pos != 100 {
				t.Fatalf("query after load = %q at %s, want %q at 0/64", got, pos, threeProducts)
			}
			if products.Scans() != scans {
				t.Fatal("a query after the load read the source")
			}
		})
	}
}

// TestFirstLoadRetriesWithRetryDisabled: a runtime that starts before its source
// must recover on its own, so the first load retries whatever the spicepod says,
// and queries meanwhile name the dataset and its last error.
func TestFirstLoadRetriesWithRetryDisabled(t *testing.T) {
	mem := checkedMem(t)
	products, _ := runtimetest.RecipeSources(t, mem, 100)
	refused := errors.New("connection refused")
	products.Fail(refused)
	e := runtimetest.NewEngine(t, `version: v1
kind: Spicepod
name: retry
datasets:
  - from: test:products
    name: products
    acceleration:
      refresh_retry_enabled: false
`, map[string]engine.Source{"products": products}, nil)
	runtimetest.WaitFor(t, e, "a failed load", func() bool { return status(t, e, "products").Failures >= 1 })

	_, err := e.Query(testContext(t), engine.Query{SQL: "SELECT * FROM products"})
	var nr *engine.NotReadyError
	if !errors.As(err, &nr) || nr.State != engine.StateError || !errors.Is(nr.Cause, refused) {
		t.Fatalf("query while the load fails: err = %v, want a NotReadyError in state error caused by %v", err, refused)
	}
	if st := status(t, e, "products"); st.State != engine.StateError || st.LastError == "" {
		t.Fatalf("status while the load fails = state %s, last error %q; want error and the cause", st.State, st.LastError)
	}

	products.Fail(nil)
	runtimetest.WaitReady(t, e)
	st := status(t, e, "products")
	if st.State != engine.StateReady || st.LastError != "" || st.Rows != 3 {
		t.Fatalf("status after recovery = state %s, last error %q, rows %d; want ready, none, 3", st.State, st.LastError, st.Rows)
	}
}

// TestStatusWithoutAcceleration: a dataset without acceleration reads its source
// on every query, so it is ready from the start; its status must not say it is
// still initializing.
func TestStatusWithoutAcceleration(t *testing.T) {
	mem := checkedMem(t)
	products, _ := runtimetest.RecipeSources(t, mem, 100)
	e := runtimetest.NewEngine(t, `version: v1
kind: Spicepod
name: federated
datasets:
  - from: test:products
    name: products
`, map[string]engine.Source{"products": products}, nil)
	if !e.Ready() {
		t.Fatal("Ready() = false with only a dataset without acceleration")
	}
	st := status(t, e, "products")
	if !st.Ready || st.State != engine.StateReady || st.Accelerated {
		t.Fatalf("status = ready %v, state %s, accelerated %v; want ready, ready, not accelerated", st.Ready, st.State, st.Accelerated)
	}
	if got, _ := mustQuery(t, e, "SELECT id, name FROM products ORDER BY id"); !equal(got, threeProducts) {
		t.Fatalf("products = %q, want the source's %q", got, threeProducts)
	}
}
