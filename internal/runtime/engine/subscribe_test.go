//go:build duckdb_arrow

package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

// insertOrders applies new orders at pos, as a change feed does.
func insertOrders(t *testing.T, e *engine.Engine, mem memory.Allocator, pos position.LSN, rows string) {
	t.Helper()
	rec, _, err := array.RecordFromJSON(mem, runtimetest.OrdersSchema, strings.NewReader(rows))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	rd, err := array.NewRecordReader(runtimetest.OrdersSchema, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	err = e.Apply(testContext(t), []string{"orders", "products"}, pos, func(tx engine.StoreTx) error {
		return tx.ApplyChanges("orders", engine.Changes{Insert: rd})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// next returns the subscription's next event, failing after a while.
func next(t *testing.T, s *engine.Subscription) engine.SubscriptionEvent {
	t.Helper()
	select {
	case ev, ok := <-s.Events():
		if !ok {
			t.Fatalf("subscription ended: %v", s.Err())
		}
		return ev
	case <-time.After(runtimetest.Timeout):
		t.Fatal("no event")
	}
	panic("unreachable")
}

// applyEvent applies a diff to rendered rows, as a subscriber does.
func applyEvent(t *testing.T, have []string, d engine.Diff) []string {
	t.Helper()
	out := slices.Clone(have)
	for _, del := range rows(&engine.Result{Records: d.Delete}) {
		i := slices.Index(out, del)
		if i < 0 {
			t.Fatalf("the diff deletes %q, which the subscriber does not hold: %v", del, have)
		}
		out = slices.Delete(out, i, i+1)
	}
	out = append(out, rows(&engine.Result{Records: d.Insert})...)
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestSubscribeToRanking subscribes to the recipe's view and follows it through
// inserted orders and progress, with a second subscriber joining midway.
func TestSubscribeToRanking(t *testing.T) {
	mem := memory.NewGoAllocator()
	products, orders := runtimetest.RecipeSources(t, mem, 100)
	e := runtimetest.NewEngine(t, runtimetest.RecipePod, map[string]engine.Source{"products": products, "orders": orders}, nil)
	runtimetest.WaitReady(t, e)
	ctx := testContext(t)

	if _, err := e.Subscribe(ctx, "nope"); !errors.Is(err, engine.ErrUnknownDataset) {
		t.Fatalf("subscribe to an unknown name: %v, want ErrUnknownDataset", err)
	}
	s, err := e.Subscribe(ctx, "rankings")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.Mode, "incremental") {
		t.Fatalf("mode %q, want incremental", s.Mode)
	}
	if s.Position != 100 {
		t.Fatalf("snapshot at %s, want 100", s.Position)
	}
	have := rows(s.Snapshot)
	want, _ := mustQuery(t, e, "SELECT * FROM rankings")
	if !equal(sorted(have), sorted(want)) {
		t.Fatalf("snapshot %v, want %v", have, want)
	}

	insertOrders(t, e, mem, 200, `[{"id": 10, "product_id": 1, "count": 100}]`)
	ev := next(t, s)
	if ev.Position != 200 || ev.Diff.Empty() {
		t.Fatalf("event at %s (empty %v), want a change at 200", ev.Position, ev.Diff.Empty())
	}
	have = applyEvent(t, have, ev.Diff)
	ev.Diff.Release()
	want, _ = mustQuery(t, e, "SELECT * FROM rankings")
	if !equal(sorted(have), sorted(want)) {
		t.Fatalf("after the change %v, want %v", have, want)
	}

	// A second subscriber starts from the rows as they are now.
	s2, err := e.Subscribe(ctx, "rankings")
	if err != nil {
		t.Fatal(err)
	}
	if s2.Position != 200 || !equal(sorted(rows(s2.Snapshot)), sorted(want)) {
		t.Fatalf("second snapshot at %s, want the rows at 200", s2.Position)
	}
	if subs := e.Subscriptions(); len(subs) != 1 || subs[0].Subscribers != 2 {
		t.Fatalf("subscriptions %+v, want one query with two subscribers", subs)
	}
	if st := status(t, e, "rankings"); st.Subscription == nil || st.Subscription.Subscribers != 2 || st.Subscription.Mode != s.Mode {
		t.Fatalf("status shows subscription %+v, want two subscribers in mode %q", st.Subscription, s.Mode)
	}

	// Progress without changes.
	if err := e.Advance(ctx, []string{"orders", "products"}, 300); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []*engine.Subscription{s, s2} {
		if ev := next(t, sub); ev.Position != 300 || !ev.Diff.Empty() {
			t.Fatalf("progress at %s (empty %v), want an empty event at 300", ev.Position, ev.Diff.Empty())
		}
	}
	// An order that does not change the top five: progress only.
	insertOrders(t, e, mem, 400, `[{"id": 11, "product_id": 9, "count": 1}]`)
	if ev := next(t, s); ev.Position != 400 || !ev.Diff.Empty() {
		t.Fatalf("event at %s (empty %v), want an empty event at 400", ev.Position, ev.Diff.Empty())
	}

	s2.Close()
	s2.Close()
	for ev := range s2.Events() { // what was queued before Close, then the end
		ev.Diff.Release()
	}
	if !errors.Is(s2.Err(), context.Canceled) {
		t.Fatalf("closed subscription ended with %v, want context.Canceled", s2.Err())
	}
	if subs := e.Subscriptions(); len(subs) != 1 || subs[0].Subscribers != 1 {
		t.Fatalf("subscriptions %+v, want one subscriber left", subs)
	}
	s.Close()
	if subs := e.Subscriptions(); len(subs) != 0 {
		t.Fatalf("subscriptions %+v after the last subscriber left, want none", subs)
	}
	if st := status(t, e, "rankings"); st.Subscription != nil {
		t.Fatalf("status shows subscription %+v after the last subscriber left", st.Subscription)
	}
}

// TestSlowSubscriberIsCutOff fills a subscriber's queue; it is ended with
// ErrSubscriberTooSlow and the writes go on.
func TestSlowSubscriberIsCutOff(t *testing.T) {
	mem := memory.NewGoAllocator()
	products, orders := runtimetest.RecipeSources(t, mem, 100)
	e := runtimetest.NewEngine(t, runtimetest.RecipePod, map[string]engine.Source{"products": products, "orders": orders},
		func(e *engine.Engine) { e.SubscriptionQueue = 1 })
	runtimetest.WaitReady(t, e)
	s, err := e.Subscribe(testContext(t), "rankings")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Snapshot.Release()
	for i := 0; i < 3; i++ {
		insertOrders(t, e, mem, position.LSN(200+i), fmt.Sprintf(`[{"id": %d, "product_id": 2, "count": 50}]`, 20+i))
	}
	n := 0
	for ev := range s.Events() {
		ev.Diff.Release()
		n++
	}
	if !errors.Is(s.Err(), engine.ErrSubscriberTooSlow) || n != 1 {
		t.Fatalf("ended with %v after %d events, want ErrSubscriberTooSlow after 1", s.Err(), n)
	}
	if got, _ := mustQuery(t, e, "SELECT count(*) FROM orders"); got[0] != "6" {
		t.Fatalf("%v orders, want 6: the writes went on", got)
	}
}

// TestSubscribeSinceNeverGoesBack: a subscriber whose rows reflect a position
// gets a snapshot at or past it, once this runtime gets there, and an error
// saying how far behind it is until then; never an older snapshot.
func TestSubscribeSinceNeverGoesBack(t *testing.T) {
	mem := memory.NewGoAllocator()
	products, orders := runtimetest.RecipeSources(t, mem, 100)
	e := runtimetest.NewEngine(t, runtimetest.RecipePod, map[string]engine.Source{"products": products, "orders": orders}, nil)
	e.MinPositionTimeout = 50 * time.Millisecond
	runtimetest.WaitReady(t, e)
	ctx := testContext(t)

	_, err := e.SubscribeSince(ctx, "rankings", 300)
	var pe *engine.PositionError
	if !errors.As(err, &pe) || pe.Want != 300 || pe.Have != 100 {
		t.Fatalf("subscribe since 300 at 100: %v, want a PositionError (want 300, have 100)", err)
	}
	if got := e.Subscriptions(); len(got) != 0 {
		t.Fatalf("a refused subscription left %v maintained", got)
	}

	e.MinPositionTimeout = runtimetest.Timeout
	done := make(chan *engine.Subscription, 1)
	go func() {
		s, err := e.SubscribeSince(ctx, "rankings", 300)
		if err != nil {
			t.Error(err)
		}
		done <- s
	}()
	insertOrders(t, e, mem, 200, `[{"id": 10, "product_id": 1, "count": 100}]`)
	insertOrders(t, e, mem, 300, `[{"id": 11, "product_id": 2, "count": 5}]`)
	s := <-done
	if s == nil {
		return
	}
	defer s.Close()
	if s.Position < 300 {
		t.Fatalf("snapshot at %s, want at least 300", s.Position)
	}
	s.Snapshot.Release()
}
