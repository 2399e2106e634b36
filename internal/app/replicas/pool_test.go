//go:build duckdb_arrow

package replicas_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/app/replicas"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
)

// runtime is one replica: the recipe's runtime 1 (our engine in DuckDB behind
// our Flight server) at a position.
type runtime struct {
	srv      *flightsrv.Server
	engine   *engine.Engine
	products *runtimetest.Source
	orders   *runtimetest.Source
}

// startRuntime starts a replica at pos; ready, when not nil, is its health.
func startRuntime(t *testing.T, pos position.LSN, ready func() bool) *runtime {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	r := &runtime{}
	r.products, r.orders = runtimetest.RecipeSources(t, mem, pos)
	r.engine = runtimetest.NewEngine(t, runtimetest.RecipePod,
		map[string]engine.Source{"products": r.products, "orders": r.orders}, nil)
	runtimetest.WaitReady(t, r.engine)
	r.srv = runtimetest.StartServer(t, r.engine, mem, func(s *flightsrv.Server) { s.Ready = ready })
	return r
}

// kill stops the replica's server at once, cutting off calls in flight.
func (r *runtime) kill() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = r.srv.Close(ctx)
}

// dns is what the pool resolves: a list of addresses the test changes.
type dns struct {
	mu    sync.Mutex
	addrs []string
}

func (d *dns) set(addrs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addrs = addrs
}

func (d *dns) resolve(context.Context) ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.addrs) == 0 {
		return nil, errors.New("no such host")
	}
	return slices.Clone(d.addrs), nil
}

// openPool opens a pool over what d resolves, reading the rankings view.
func openPool(t *testing.T, d *dns) *replicas.Pool {
	t.Helper()
	p := replicas.NewPool("test runtime", "runtime:50051", func(addr string) (replicas.Reader, error) {
		f := ranking.NewFlight("test runtime", addr, ranking.MaterializedQuery)
		return f, f.Open()
	})
	p.Resolve = d.resolve
	p.ResolveInterval = 20 * time.Millisecond
	p.Logger = slog.New(slog.NewTextHandler(tWriter{t}, nil))
	if err := p.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close pool: %v", err)
		}
	})
	return p
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) { w.t.Log(string(b)); return len(b), nil }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(runtimetest.Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", runtimetest.Timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// status returns the pool's view of addr.
func status(p *replicas.Pool, addr string) (replicas.Status, bool) {
	for _, s := range p.Replicas() {
		if s.Addr == addr {
			return s, true
		}
	}
	return replicas.Status{}, false
}

func healthy(p *replicas.Pool, addr string) func() bool {
	return func() bool { s, ok := status(p, addr); return ok && s.Healthy }
}

func mustRead(t *testing.T, p *replicas.Pool, req ranking.Request) ranking.Result {
	t.Helper()
	res, err := p.Ranking(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3 {
		t.Fatalf("rows=%v, want the recipe's 3", res.Rows)
	}
	return res
}

func TestPool_BalancesOverHealthyReplicas(t *testing.T) {
	var d dns
	rs := []*runtime{startRuntime(t, 100, nil), startRuntime(t, 100, nil), startRuntime(t, 100, nil)}
	d.set(rs[0].srv.Addr(), rs[1].srv.Addr(), rs[2].srv.Addr())
	p := openPool(t, &d)
	for _, r := range rs {
		waitFor(t, r.srv.Addr()+" healthy", healthy(p, r.srv.Addr()))
	}
	for range 30 {
		mustRead(t, p, ranking.Request{})
	}
	for _, s := range p.Replicas() {
		if s.Requests == 0 || s.Failures != 0 {
			t.Errorf("%s: %d reads, %d failed; want some reads, none failed", s.Addr, s.Requests, s.Failures)
		}
	}
}

func TestPool_NoReplica(t *testing.T) {
	var d dns
	p := openPool(t, &d)
	_, err := p.Ranking(context.Background(), ranking.Request{})
	if !errors.Is(err, ranking.ErrUnavailable) {
		t.Fatalf("err=%v, want ErrUnavailable", err)
	}
}

// A read that arrives before the pool's first resolution has finished waits
// for it and is answered, instead of failing for want of a replica.
func TestPool_FirstReadWaitsForResolution(t *testing.T) {
	r := startRuntime(t, 100, nil)
	called, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	p := replicas.NewPool("test runtime", "runtime:50051", func(addr string) (replicas.Reader, error) {
		f := ranking.NewFlight("test runtime", addr, ranking.MaterializedQuery)
		return f, f.Open()
	})
	p.Resolve = func(ctx context.Context) ([]string, error) {
		once.Do(func() { close(called) })
		select {
		case <-release:
			return []string{r.srv.Addr()}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	p.ResolveInterval = runtimetest.Timeout // the first resolution may block that long
	if err := p.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	<-called
	done := make(chan error, 1)
	go func() {
		_, err := p.Ranking(context.Background(), ranking.Request{})
		done <- err
	}()
	waitFor(t, "the read to wait for the first resolution", func() bool {
		select {
		case err := <-done:
			t.Fatalf("read answered before the first resolution: %v", err)
		default:
		}
		return replicas.Waiting(p) == 1
	})
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("read after the first resolution: %v", err)
	}
}

// A replica receives reads only once its health says SERVING.
func TestPool_JoinsWhenServing(t *testing.T) {
	var d dns
	var ready atomic.Bool
	a, b := startRuntime(t, 100, nil), startRuntime(t, 100, ready.Load)
	d.set(a.srv.Addr())
	p := openPool(t, &d)
	waitFor(t, "a healthy", healthy(p, a.srv.Addr()))
	d.set(a.srv.Addr(), b.srv.Addr())
	waitFor(t, "b known", func() bool { _, ok := status(p, b.srv.Addr()); return ok })
	for range 20 {
		mustRead(t, p, ranking.Request{})
	}
	if s, _ := status(p, b.srv.Addr()); s.Requests != 0 {
		t.Fatalf("b, not ready, got %d reads", s.Requests)
	}
	ready.Store(true)
	waitFor(t, "b healthy", healthy(p, b.srv.Addr()))
	for range 20 {
		mustRead(t, p, ranking.Request{})
	}
	if s, _ := status(p, b.srv.Addr()); s.Requests == 0 {
		t.Fatal("b, ready, got no read")
	}
}

// A replica killed under load costs no read: those cut off or refused are
// retried on another; the pool then stops sending to it.
func TestPool_FailsOverWithoutErrors(t *testing.T) {
	var d dns
	rs := []*runtime{startRuntime(t, 100, nil), startRuntime(t, 100, nil), startRuntime(t, 100, nil)}
	d.set(rs[0].srv.Addr(), rs[1].srv.Addr(), rs[2].srv.Addr())
	p := openPool(t, &d)
	for _, r := range rs {
		waitFor(t, r.srv.Addr()+" healthy", healthy(p, r.srv.Addr()))
	}
	var (
		stop  atomic.Bool
		reads atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		errs  []error
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if _, err := p.Ranking(context.Background(), ranking.Request{}); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
				reads.Add(1)
			}
		}()
	}
	waitFor(t, "reads under way", func() bool { return reads.Load() > 50 })
	victim := rs[1].srv.Addr()
	rs[1].kill()
	waitFor(t, "the pool to stop trusting the killed replica", func() bool { return !healthy(p, victim)() })
	before, _ := status(p, victim)
	n := reads.Load()
	waitFor(t, "reads after the kill", func() bool { return reads.Load() > n+200 })
	stop.Store(true)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d reads failed; first: %v", len(errs), reads.Load(), errs[0])
	}
	if after, _ := status(p, victim); after.Requests != before.Requests {
		t.Fatalf("the dead replica got %d reads after it was found dead", after.Requests-before.Requests)
	}
}

// A draining replica (NOT_SERVING, still answering) gets no new reads.
func TestPool_Drain(t *testing.T) {
	var d dns
	a, b := startRuntime(t, 100, nil), startRuntime(t, 100, nil)
	d.set(a.srv.Addr(), b.srv.Addr())
	p := openPool(t, &d)
	waitFor(t, "a healthy", healthy(p, a.srv.Addr()))
	waitFor(t, "b healthy", healthy(p, b.srv.Addr()))
	b.srv.Drain()
	waitFor(t, "b draining", func() bool { return !healthy(p, b.srv.Addr())() })
	before, _ := status(p, b.srv.Addr())
	for range 20 {
		mustRead(t, p, ranking.Request{})
	}
	if after, _ := status(p, b.srv.Addr()); after.Requests != before.Requests {
		t.Fatalf("draining b got %d new reads", after.Requests-before.Requests)
	}
}

// Read-your-writes across replicas at different positions: a read with a
// minimum position is answered at or past it, by the replica that is there
// or, when only a lagging one is left, by that one once it has caught up.
func TestPool_MinPosition(t *testing.T) {
	const behind, ahead = position.LSN(100), position.LSN(200)
	var d dns
	a, b := startRuntime(t, behind, nil), startRuntime(t, ahead, nil)
	d.set(a.srv.Addr(), b.srv.Addr())
	p := openPool(t, &d)
	waitFor(t, "a healthy", healthy(p, a.srv.Addr()))
	waitFor(t, "b healthy", healthy(p, b.srv.Addr()))
	seen := map[position.LSN]bool{}
	for range 10 { // without a minimum, either answers
		seen[mustRead(t, p, ranking.Request{}).Position] = true
	}
	if !seen[behind] || !seen[ahead] {
		t.Fatalf("positions seen=%v, want both %s and %s", seen, behind, ahead)
	}

	last := ahead // a client that sends the last position it saw
	for i := range 20 {
		res := mustRead(t, p, ranking.Request{MinPosition: last})
		if res.Position < last {
			t.Fatalf("read %d: position %s, older than %s seen before", i, res.Position, last)
		}
		last = res.Position
	}

	// Only the lagging replica is left: it answers once it has caught up.
	d.set(a.srv.Addr())
	waitFor(t, "b gone", func() bool { return len(p.Replicas()) == 1 })
	type answer struct {
		res ranking.Result
		err error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := p.Ranking(context.Background(), ranking.Request{MinPosition: ahead})
		got <- answer{res, err}
	}()
	a.products.Set(t, ahead, []any{1, "the most beautiful flower"},
		[]any{2, "the most delicious chocalate"}, []any{3, "nintendo"})
	a.orders.Set(t, ahead, []any{1, 1, 10}, []any{2, 2, 20}, []any{3, 3, 30})
	for _, name := range []string{"products", "orders"} {
		if err := a.engine.Refresh(name); err != nil {
			t.Fatal(err)
		}
	}
	ans := <-got
	if ans.err != nil {
		t.Fatal(ans.err)
	}
	if ans.res.Position < ahead {
		t.Fatalf("position=%s, want at least %s", ans.res.Position, ahead)
	}
}
