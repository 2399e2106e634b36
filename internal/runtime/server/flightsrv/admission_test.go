//go:build duckdb_arrow

package flightsrv_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// crossJoin is a 24-way cross join of the recipe's three orders: it reads
// only accelerated datasets and runs for minutes.
func crossJoin() string {
	from := make([]string, 24)
	for i := range from {
		from[i] = fmt.Sprintf("orders o%d", i)
	}
	return "SELECT 1 FROM " + strings.Join(from, ", ")
}

// limitedCrossJoin is a prepared statement whose cost its parameter decides:
// LIMIT 1 answers at once, a large limit runs for minutes.
func limitedCrossJoin() string {
	return "SELECT count(*) FROM (" + crossJoin() + " LIMIT ?) AS t"
}

func executeWithLimit(ctx context.Context, t *testing.T, stmt *flightsql.PreparedStatement, limit int64) error {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil))
	b.Field(0).(*array.Int64Builder).Append(limit)
	params := b.NewRecordBatch()
	b.Release()
	defer params.Release()
	stmt.SetParameters(params)
	_, err := stmt.Execute(ctx)
	return err
}

// A text with a cheap history whose run turns heavy (a prepared statement run
// with another parameter) is moved out of the light lane while it runs, or
// stopped and queued in the heavy lane: the rankings keep answering.
func TestCheapTextTurnedHeavyLeavesTheLightLane(t *testing.T) {
	r := newRecipe(t, func(e *engine.Engine) {
		e.Admission = engine.Admission{Slots: 4, HeavySlots: 2, QueueTimeout: 3 * time.Second,
			LightBudget: 500 * time.Millisecond}
		e.QueryTimeout = 5 * time.Minute
	}, nil)
	c := newClient(t, r.srv)
	ctx := testContext(t)
	stmt, err := c.Prepare(ctx, limitedCrossJoin())
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close(ctx)
	if err := executeWithLimit(ctx, t, stmt, 1); err != nil {
		t.Fatalf("cheap run: %v", err)
	}
	rankings := func() error {
		info, err := c.Execute(ctx, runtimetest.RankingsSQL)
		if err != nil {
			return err
		}
		if got, _, _ := doGet(t, c, info); !equal(got, wantRankings) {
			return fmt.Errorf("rows=%q, want %q", got, wantRankings)
		}
		return nil
	}
	if err := rankings(); err != nil {
		t.Fatalf("first ranking read: %v", err)
	}

	// As many runs as there are slots, at once, all admitted as light.
	heavyCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	const runs = 4
	for i := 0; i < runs; i++ {
		wg.Add(1)
		own, err := c.Prepare(ctx, limitedCrossJoin()) // the same text: its cheap history
		if err != nil {
			t.Fatal(err)
		}
		defer own.Close(ctx)
		go func() {
			defer wg.Done()
			_ = executeWithLimit(heavyCtx, t, own, 1<<60)
		}()
	}
	runtimetest.WaitFor(t, r.engine, "the four runs to hold or wait for slots", func() bool {
		s := r.engine.Admission.Stats()
		return s.Running+s.QueuedLight+s.QueuedHeavy == runs
	})

	const reads = 10
	ok := 0
	for i := 0; i < reads; i++ {
		if err := rankings(); err != nil {
			t.Logf("ranking read %d: %v", i, err)
			continue
		}
		ok++
	}
	if ok != reads {
		t.Fatalf("%d of %d ranking reads answered while a cheap text ran heavy four times, want all", ok, reads)
	}
	runtimetest.WaitFor(t, r.engine, "every run to leave the light lane", func() bool {
		s := r.engine.Admission.Stats()
		return s.Moved+s.Restarted == runs
	})
	if s := r.engine.Admission.Stats(); s.RunningHeavy != 2 || s.Running != 2 || s.QueuedHeavy != 2 {
		t.Errorf("stats %+v: want 2 runs in the heavy lane and 2 waiting for it, none in a light slot", s)
	}
}

// The runtime's own work does not pass through admission: while six unique
// cross joins hold or wait for every slot they may, a change is applied and
// reaches a subscriber (runtime 2's path).
func TestOwnWorkGoesOnUnderUniqueHeavyQueries(t *testing.T) {
	r := newRecipe(t, func(e *engine.Engine) {
		e.Admission = engine.Admission{Slots: 4, HeavySlots: 2, QueueTimeout: time.Minute,
			LightBudget: 500 * time.Millisecond}
		e.QueryTimeout = 5 * time.Minute
	}, nil)
	c := newClient(t, r.srv)
	ctx := testContext(t)
	rd, err := subscribe(ctx, newPlainClient(t, r.srv), subscribeTo("rankings"))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	var held []string
	for m := next(t, rd); ; m = next(t, rd) {
		held = append(held, m.rows...)
		if m.meta.Kind == wire.KindCommit {
			break
		}
	}

	heavyCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	const attackers = 6
	for i := 0; i < attackers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.Execute(heavyCtx, fmt.Sprintf("SELECT count(*) + %d FROM (%s) AS t", i, crossJoin()))
		}()
	}
	runtimetest.WaitFor(t, r.engine, "the six cross joins to hold or wait for slots, none on trial", func() bool {
		s := r.engine.Admission.Stats()
		return s.Running+s.QueuedLight+s.QueuedHeavy == attackers && s.OnTrial == 0
	})

	r.changeOrders(t, 200) // refreshes both datasets and waits for the view's watermark
	for done := false; !done; {
		m := next(t, rd)
		switch m.meta.Kind {
		case wire.KindDelete:
			for _, row := range m.rows {
				held = slices.DeleteFunc(held, func(h string) bool { return h == row })
			}
		case wire.KindInsert:
			held = append(held, m.rows...)
		}
		done = m.meta.Position >= 200 && (m.meta.Commit || m.meta.Kind == wire.KindProgress)
	}
	if slices.Sort(held); !equal(held, sorted(wantChangedRankings)) {
		t.Fatalf("the subscriber holds %q after the change, want %q", held, wantChangedRankings)
	}
	if s := r.engine.Admission.Stats(); s.Running+s.QueuedLight+s.QueuedHeavy != attackers {
		t.Fatalf("stats %+v: the cross joins ended before the change was applied; the test proves nothing", s)
	}
}
