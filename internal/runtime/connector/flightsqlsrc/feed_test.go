//go:build duckdb_arrow

package flightsqlsrc_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/flightsqlsrc"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
)

// subscribedPod is the recipe's second spicepod with refresh_mode: changes.
func subscribedPod(endpoint string) string {
	return strings.Replace(materializedPod(endpoint), "refresh_mode: full", "refresh_mode: changes", 1)
}

// logBuffer collects a logger's lines; safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newSubscriber starts runtime 2 with refresh_mode: changes: its rankings are
// kept by a Feed over src. adjust, when given, sets the feed's tunables.
func newSubscriber(t *testing.T, endpoint string, src *flightsqlsrc.Source, adjust func(*flightsqlsrc.Feed)) (*engine.Engine, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b := runtimetest.NewEngine(t, subscribedPod(endpoint), nil, func(e *engine.Engine) {
		e.Logger = logger
		f := flightsqlsrc.NewFeed(e, "rankings", src)
		f.Logger = logger
		f.MaxBackoff = 200 * time.Millisecond
		if adjust != nil {
			adjust(f)
		}
		e.AddFeed(f)
	})
	runtimetest.WaitReady(t, b)
	return b, logs
}

// withoutSubscriptions hides the engine's Subscribe from the Flight server, which
// then answers as a runtime without subscriptions does.
type withoutSubscriptions struct{ flightsrv.Engine }

// TestFeedFallsBackWithoutSubscriptions: an upstream that serves no
// subscriptions is followed as before, by change notices and whole reads; the
// log says so once, however often subscribing is tried again.
func TestFeedFallsBackWithoutSubscriptions(t *testing.T) {
	a := newUpstream(t)
	runtimetest.StopServer(t, a.srv)
	a.srv = runtimetest.StartServer(t, withoutSubscriptions{a.engine}, a.mem, nil)
	endpoint := "http://" + a.srv.Addr()
	src := newSource(t, map[string]string{"flightsql_endpoint": endpoint}, "rankings")
	b, logs := newSubscriber(t, endpoint, src, func(f *flightsqlsrc.Feed) {
		f.RefreshInterval = time.Hour // only change notices bring changes
		f.ResubscribeInterval = 50 * time.Millisecond
	})

	if got, pos := query(t, b, rankingsQuery); !equal(got, wantRankings) || pos != 100 {
		t.Fatalf("B=%q at %s, want %q at 0/64", got, pos, wantRankings)
	}
	a.change(t, 200, 0)
	runtimetest.WaitWatermark(t, b, "rankings", 200)
	if got, _ := query(t, b, rankingsQuery); !equal(got, wantChangedRankings) {
		t.Errorf("B after the change=%q, want %q", got, wantChangedRankings)
	}
	// Let it try to subscribe again a few times.
	a.change(t, 300, 100)
	runtimetest.WaitWatermark(t, b, "rankings", 300)
	st, err := b.StatusOf(context.Background(), "rankings")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Fresh || st.LastError != "" || st.RefreshMode != "changes" {
		t.Errorf("status: fresh=%v last_error=%q refresh_mode=%s, want fresh, no error, changes", st.Fresh, st.LastError, st.RefreshMode)
	}
	if got, want := logs.count("the upstream serves no subscriptions"), 1; got != want {
		t.Errorf("fallback logged %d times, want %d; log:\n%s", got, want, logs)
	}
	if got := logs.count("msg=subscribed"); got != 0 {
		t.Errorf("log says subscribed %d times, want 0", got)
	}
}

// rankingsInOrder is the recipe's view in a total order, to compare runtime 1's
// view with runtime 2's table.
const rankingsInOrder = "select name, count from rankings order by count desc nulls last, name"

// set replaces runtime 1's products and orders at pos and refreshes both.
func (u *upstream) set(t *testing.T, pos position.LSN, products, orders [][]any) {
	t.Helper()
	u.products.Set(t, pos, products...)
	u.orders.Set(t, pos, orders...)
	for _, name := range []string{"products", "orders"} {
		if err := u.engine.Refresh(name); err != nil {
			t.Fatal(err)
		}
	}
	runtimetest.WaitWatermark(t, u.engine, "rankings", pos)
}

// TestSubscriptionFollowsTheView: runtime 2 subscribes to runtime 1's view and,
// after each change of runtime 1's data, holds exactly the view's rows at the
// view's position (duplicates and NULLs included), then takes a new snapshot
// after runtime 1's server went away and came back.
func TestSubscriptionFollowsTheView(t *testing.T) {
	a := newUpstream(t)
	endpoint := "http://" + a.srv.Addr()
	src := newSource(t, map[string]string{"flightsql_endpoint": endpoint}, "rankings")
	b, logs := newSubscriber(t, endpoint, src, nil)

	check := func(step string, pos position.LSN) {
		t.Helper()
		runtimetest.WaitWatermark(t, b, "rankings", pos)
		want, posA := query(t, a.engine, rankingsInOrder)
		got, posB := query(t, b, rankingsInOrder)
		if !equal(got, want) || posB != posA {
			t.Fatalf("%s: B=%q at %s, A's view=%q at %s", step, got, posB, want, posA)
		}
	}
	check("snapshot", 100)
	products := [][]any{{1, "the most beautiful flower"}, {2, "the most delicious chocalate"}, {3, "nintendo"}}
	orders := [][]any{{1, 1, 10}, {2, 2, 20}, {3, 3, 30}}
	steps := []struct {
		name             string
		products, orders [][]any
	}{
		{name: "an order", orders: append(orders, []any{4, 1, 25})},
		{name: "products without orders", products: append(products, []any{4, "a"}, []any{5, "b"}, []any{6, "c"}),
			orders: append(orders, []any{4, 1, 25})},
		{name: "a new leader", products: append(products, []any{4, "a"}, []any{5, "b"}, []any{6, "c"}),
			orders: append(orders, []any{4, 1, 25}, []any{5, 6, 100})},
		{name: "duplicate rows", products: append(products, []any{4, "a"}, []any{5, "a"}, []any{6, "c"}),
			orders: append(orders, []any{4, 4, 7}, []any{5, 5, 7})},
		{name: "no orders", products: append(products, []any{4, "a"}, []any{5, "a"}), orders: nil},
		{name: "back to the start", products: products, orders: orders},
	}
	pos := position.LSN(100)
	for _, s := range steps {
		pos += 100
		p := s.products
		if p == nil {
			p = products
		}
		a.set(t, pos, p, s.orders)
		check(s.name, pos)
	}
	if got := logs.count("msg=subscribed"); got != 1 {
		t.Errorf("subscribed %d times, want 1; log:\n%s", got, logs)
	}
	if got := logs.count("serves no subscriptions"); got != 0 {
		t.Errorf("fell back %d times, want 0; log:\n%s", got, logs)
	}
	if !strings.Contains(logs.String(), "mode=") {
		t.Errorf("the log does not say the subscription's mode:\n%s", logs)
	}

	// Runtime 1's server goes away and comes back on the same port with newer
	// data: runtime 2 subscribes again and takes a new snapshot.
	addr := a.srv.Addr()
	runtimetest.StopServer(t, a.srv)
	pos += 100
	a.set(t, pos, products, append(orders, []any{4, 2, 50}))
	a.srv = runtimetest.StartServerAt(t, addr, a.engine, a.mem, nil)
	check("after the upstream came back", pos)
	if got := logs.count("msg=subscribed"); got != 2 {
		t.Errorf("subscribed %d times, want 2; log:\n%s", got, logs)
	}
	runtimetest.WaitFor(t, b, "B to be fresh again", func() bool {
		st, _ := b.StatusOf(context.Background(), "rankings")
		return st.Fresh && st.LastError == ""
	})
}

// TestSilentUpstreamIsDropped: a subscription from which nothing arrives for
// the heartbeat timeout ends with ErrHeartbeatTimeout, and a feed subscribes
// again (here the upstream sends no heartbeats within the timeout).
func TestSilentUpstreamIsDropped(t *testing.T) {
	a := newUpstream(t, func(s *flightsrv.Server) { s.HeartbeatInterval = time.Hour })
	endpoint := "http://" + a.srv.Addr()
	src := newSource(t, map[string]string{"flightsql_endpoint": endpoint}, "rankings")
	src.HeartbeatTimeout = 100 * time.Millisecond

	st, err := src.Subscribe(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rd := st.Snapshot()
	var n int64
	for rd.Next() {
		n += rd.RecordBatch().NumRows()
	}
	rd.Release()
	if err := rd.Err(); err != nil || !st.Complete() || n != 3 {
		t.Fatalf("snapshot: %d rows, complete=%v, err=%v; want 3 rows, complete", n, st.Complete(), err)
	}
	if _, err := st.Next(); !errors.Is(err, flightsqlsrc.ErrHeartbeatTimeout) {
		t.Fatalf("Next on a silent stream: err=%v, want ErrHeartbeatTimeout", err)
	}

	_, logs := newSubscriber(t, endpoint, src, nil)
	deadline := time.Now().Add(runtimetest.Timeout)
	for logs.count("msg=subscribed") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the feed did not subscribe again after silence; log:\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "no message from the upstream within the heartbeat timeout") {
		t.Errorf("the log does not say why the subscription ended:\n%s", logs)
	}
}

// TestResubscribeHandshakesAgain: an upstream that restarts issues new bearer
// tokens; the feed handshakes again at once instead of reporting the refused
// token, and follows the restarted upstream.
func TestResubscribeHandshakesAgain(t *testing.T) {
	keys := func(s *flightsrv.Server) { s.APIKeys = apikey.ReadOnlyKeys("k") }
	a := newUpstream(t, keys)
	endpoint := "http://" + a.srv.Addr()
	src := newSource(t, map[string]string{"flightsql_endpoint": endpoint, "flightsql_password": "k"}, "rankings")
	b, logs := newSubscriber(t, endpoint, src, nil)

	addr := a.srv.Addr()
	runtimetest.StopServer(t, a.srv)
	a.set(t, 200, [][]any{{1, "the most beautiful flower"}, {2, "the most delicious chocalate"}, {3, "nintendo"}},
		[][]any{{1, 1, 10}, {2, 2, 20}, {3, 3, 30}, {4, 2, 5}})
	a.srv = runtimetest.StartServerAt(t, addr, a.engine, a.mem, keys)
	runtimetest.WaitWatermark(t, b, "rankings", 200)
	want, _ := query(t, a.engine, rankingsInOrder)
	if got, _ := query(t, b, rankingsInOrder); !equal(got, want) {
		t.Errorf("B=%q, want %q", got, want)
	}
	if strings.Contains(logs.String(), "refused the credentials") {
		t.Errorf("the refused token of the old upstream was reported:\n%s", logs)
	}
}

// TestDivergedTableResubscribes: a change that retracts a row runtime 2 no
// longer holds fails the whole transaction it is applied in (with the changes
// batched with it), and the feed subscribes again for a new snapshot.
func TestDivergedTableResubscribes(t *testing.T) {
	a := newUpstream(t)
	endpoint := "http://" + a.srv.Addr()
	src := newSource(t, map[string]string{"flightsql_endpoint": endpoint}, "rankings")
	b, logs := newSubscriber(t, endpoint, src, nil)
	runtimetest.WaitWatermark(t, b, "rankings", 100)

	// Take the flower's row out of B's table behind the feed's back.
	st, err := src.Subscribe(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	rd := st.Snapshot()
	var flower arrow.RecordBatch
	for rd.Next() && flower == nil {
		rec := rd.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			if strings.Contains(rec.Column(0).ValueStr(i), "flower") {
				flower = rec.NewSlice(int64(i), int64(i)+1)
				break
			}
		}
	}
	rd.Release()
	st.Close()
	if flower == nil {
		t.Fatal("the snapshot has no row of the flower")
	}
	err = b.Apply(context.Background(), []string{"rankings"}, 100, func(tx engine.StoreTx) error {
		del, err := array.NewRecordReader(flower.Schema(), []arrow.RecordBatch{flower})
		if err != nil {
			return err
		}
		defer del.Release()
		return tx.ApplyDiff("rankings", del, nil)
	})
	flower.Release()
	if err != nil {
		t.Fatal(err)
	}

	// Changes of the flower's count, queued as fast as runtime 1 makes them.
	a.change(t, 200, 0)
	a.change(t, 300, 10)
	a.change(t, 400, 20)
	runtimetest.WaitWatermark(t, b, "rankings", 400)
	want, _ := query(t, a.engine, rankingsInOrder)
	if got, _ := query(t, b, rankingsInOrder); !equal(got, want) {
		t.Errorf("B=%q, want A's %q", got, want)
	}
	if got := logs.count("msg=subscribed"); got != 2 {
		t.Errorf("subscribed %d times, want 2; log:\n%s", got, logs)
	}
	if !strings.Contains(logs.String(), "equal rows are held") {
		t.Errorf("the log does not say which retraction failed:\n%s", logs)
	}
}
