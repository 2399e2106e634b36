//go:build duckdb_arrow

package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// TestMinPosition asks for positions the data has and has not reached.
func TestMinPosition(t *testing.T) {
	mem := checkedMem(t)
	products, orders := runtimetest.RecipeSources(t, mem, 100)
	e := runtimetest.NewEngine(t, runtimetest.RecipePod, map[string]engine.Source{"products": products, "orders": orders},
		func(e *engine.Engine) { e.MinPositionTimeout = 100 * time.Millisecond })
	runtimetest.WaitReady(t, e)

	for _, tc := range []struct {
		name       string
		sql        string
		min        position.LSN
		deadline   bool   // the request's context ends before MinPositionTimeout
		wantWaited string // "" when the query answers
	}{
		{name: "reached", sql: "SELECT * FROM products", min: 100},
		{name: "reached by a view", sql: "SELECT * FROM rankings", min: 64},
		{name: "not reached", sql: "SELECT * FROM products", min: 1 << 32, wantWaited: "100ms"},
		{name: "not reached by a view", sql: "SELECT * FROM rankings", min: 101, wantWaited: "100ms"},
		{name: "not reached before the request's deadline", sql: "SELECT * FROM orders", min: 101, deadline: true, wantWaited: "the request's deadline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			if tc.deadline {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond) // long enough to plan on a busy machine
				defer cancel()
				e.MinPositionTimeout = runtimetest.Timeout
				defer func() { e.MinPositionTimeout = 100 * time.Millisecond }()
			}
			res, err := e.Query(ctx, engine.Query{SQL: tc.sql, MinPosition: tc.min})
			if tc.wantWaited == "" {
				if err != nil {
					t.Fatalf("query: %v", err)
				}
				if got := res.Position; got < tc.min {
					t.Fatalf("answer at %s, want at least %s", got, tc.min)
				}
				res.Release()
				return
			}
			var pe *engine.PositionError
			if !errors.As(err, &pe) || !errors.Is(err, engine.ErrPositionTimeout) {
				t.Fatalf("query: err = %v, want a PositionError", err)
			}
			if pe.Want != tc.min || pe.Have != 100 || pe.Waited != tc.wantWaited {
				t.Fatalf("PositionError = %+v, want want %s, have 0/64, waited %q", pe, tc.min, tc.wantWaited)
			}
			if !strings.Contains(err.Error(), wire.HeaderMinPosition) {
				t.Fatalf("error %q does not say what to relax", err)
			}
		})
	}
}

// TestMinPositionWaitsForRefresh holds a refresh that brings products to 0/C8:
// a query asking for 0/C8 does not answer from the older data, and answers with
// the new data once the refresh commits.
func TestMinPositionWaitsForRefresh(t *testing.T) {
	mem := checkedMem(t)
	products, _ := runtimetest.RecipeSources(t, mem, 100)
	e := runtimetest.NewEngine(t, productsPod("on_load"), map[string]engine.Source{"products": products}, nil)
	runtimetest.WaitReady(t, e)

	release := products.BlockNext(t, 1)
	products.Set(t, 200, []any{1, "rose"})
	if err := e.Refresh("products"); err != nil {
		t.Fatal(err)
	}
	runtimetest.WaitFor(t, e, "the refresh to start", func() bool { return products.Blocked() == 1 })

	ctx, cancel := context.WithTimeout(testContext(t), 50*time.Millisecond)
	_, err := e.Query(ctx, engine.Query{SQL: "SELECT * FROM products", MinPosition: 200})
	cancel()
	if !errors.Is(err, engine.ErrPositionTimeout) {
		t.Fatalf("query for 0/C8 during the refresh: err = %v, want ErrPositionTimeout", err)
	}

	type answer struct {
		rows []string
		pos  position.LSN
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := e.Query(testContext(t), engine.Query{SQL: "SELECT id, name FROM products", MinPosition: 200})
		if err != nil {
			done <- answer{err: err}
			return
		}
		pos := res.Position
		done <- answer{rows: rows(res), pos: pos}
	}()
	release()
	a := <-done
	if a.err != nil {
		t.Fatalf("query for 0/C8: %v", a.err)
	}
	if want := []string{"1|rose"}; !equal(a.rows, want) || a.pos != 200 {
		t.Fatalf("query for 0/C8 = %q at %s, want %q at 0/C8", a.rows, a.pos, want)
	}
}
