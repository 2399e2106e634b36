//go:build duckdb_arrow

package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

// checkedMem returns an allocator whose every byte must be released by the end
// of the test (its check runs after every other cleanup registered later).
func checkedMem(t *testing.T) *memory.CheckedAllocator {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// testContext returns a context that ends with the test or after
// runtimetest.Timeout.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), runtimetest.Timeout)
	t.Cleanup(cancel)
	return ctx
}

// rows renders a result's rows as "v1|v2|...", nulls as "null", and releases it.
func rows(res *engine.Result) []string {
	defer res.Release()
	out := []string{}
	for _, rec := range res.Records {
		for r := 0; r < int(rec.NumRows()); r++ {
			vals := make([]string, rec.NumCols())
			for c := range vals {
				if col := rec.Column(c); col.IsNull(r) {
					vals[c] = "null"
				} else {
					vals[c] = col.ValueStr(r)
				}
			}
			out = append(out, strings.Join(vals, "|"))
		}
	}
	return out
}

// mustQuery runs sql and returns its rows and the position it reflects.
func mustQuery(t *testing.T, e *engine.Engine, sql string) ([]string, position.LSN) {
	t.Helper()
	res, err := e.Query(testContext(t), engine.Query{SQL: sql})
	if err != nil {
		t.Fatalf("query %q: %v", sql, err)
	}
	pos := res.Position
	return rows(res), pos
}

// status returns the status of one dataset or view.
func status(t *testing.T, e *engine.Engine, name string) engine.Status {
	t.Helper()
	st, err := e.StatusOf(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func equal(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}
