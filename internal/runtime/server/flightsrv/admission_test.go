//go:build duckdb_arrow

package flightsrv_test

import (
	"context"
	"fmt"
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
)

// limitedCrossJoin is a prepared statement whose cost its parameter decides:
// LIMIT 1 answers at once, a large limit runs for minutes (a 24-way cross
// join of the recipe's three orders).
func limitedCrossJoin() string {
	from := make([]string, 24)
	for i := range from {
		from[i] = fmt.Sprintf("orders o%d", i)
	}
	return "SELECT count(*) FROM (SELECT 1 FROM " + strings.Join(from, ", ") + " LIMIT ?) AS t"
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
			LightBudget: 200 * time.Millisecond}
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
		go func() {
			defer wg.Done()
			_ = executeWithLimit(heavyCtx, t, stmt, 1<<60)
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
	s := r.engine.Admission.Stats()
	if s.Moved+s.Restarted < runs || s.RunningHeavy != 2 {
		t.Errorf("stats %+v: want the %d runs moved or restarted, 2 running in the heavy lane", s, runs)
	}
}
