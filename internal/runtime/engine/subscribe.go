package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// DefaultSubscriptionQueue is how many events a subscriber may fall behind
// before it is cut off (ErrSubscriberTooSlow) and must subscribe again.
const DefaultSubscriptionQueue = 1024

// ErrSubscriberTooSlow ends a subscription whose subscriber fell more than its
// queue behind; subscribing again starts from a new snapshot.
var ErrSubscriberTooSlow = errors.New("subscriber fell too far behind: subscribe again for a new snapshot")

// ErrNotSubscribable: the store cannot maintain query results.
var ErrNotSubscribable = errors.New("this runtime's store cannot maintain query results")

// ErrResync is returned by Maintained.Update when a change cannot be told as
// rows (a table replaced wholesale by a full refresh): the subscriptions end
// with it and subscribers take a new snapshot.
var ErrResync = errors.New("the subscribed rows were replaced wholesale: subscribe again for a new snapshot")

// ErrMaintenanceFailed ends the subscriptions of a query whose maintenance
// failed; subscribing again computes it afresh.
var ErrMaintenanceFailed = errors.New("maintaining the subscribed query failed: subscribe again for a new snapshot")

// Subscription streams a dataset's or view's rows: Snapshot holds them as of
// Position, then each event carries the rows that left and entered as of a later
// position, or only a newer position when nothing changed (progress).
type Subscription struct {
	// Snapshot holds the rows as of Position; the subscriber releases it.
	Snapshot *Result
	Position position.LSN
	// Mode is the maintained query's: "incremental: ...", or "recompute: <why>".
	Mode string

	events chan SubscriptionEvent
	owner  *Engine
	query  *subQuery
	ended  bool  // guarded by owner.subs.mu
	err    error // guarded by owner.subs.mu
	done   chan struct{}
}

// SubscriptionEvent is one step of a subscription. The receiver releases Diff.
type SubscriptionEvent struct {
	Position position.LSN
	Diff     Diff // empty for progress: the rows still hold as of Position
}

// Events yields the subscription's events in order; it is closed when the
// subscription ends, with Err saying why.
func (s *Subscription) Events() <-chan SubscriptionEvent { return s.events }

// Err says why Events was closed: ErrSubscriberTooSlow, ErrClosed, ErrResync,
// ErrMaintenanceFailed, or the context's error. It is nil while the
// subscription runs.
func (s *Subscription) Err() error {
	s.owner.subs.mu.Lock()
	defer s.owner.subs.mu.Unlock()
	return s.err
}

// Close ends the subscription; it is safe to call more than once. It waits
// for a write transaction in progress to finish.
func (s *Subscription) Close() {
	e := s.owner
	e.subs.mu.Lock()
	defer e.subs.mu.Unlock()
	e.endLocked(s, context.Canceled)
}

// subscriptions is the engine's set of maintained queries. Its mutex also
// serializes the engine's write transactions, so that a snapshot and the
// events after it meet exactly, and wm is the committed watermark of every
// dataset and view.
type subscriptions struct {
	mu      sync.Mutex
	wm      map[string]position.LSN // nil until the first subscription
	queries map[string]*subQuery
	// info is what Status shows of each query (mode and subscribers), read
	// without waiting for a write transaction.
	info atomic.Pointer[map[string]SubscriptionInfo]
}

// publishInfoLocked refreshes subs.info; the caller holds subs.mu.
func (s *subscriptions) publishInfoLocked() {
	m := make(map[string]SubscriptionInfo, len(s.queries))
	for _, q := range s.queries {
		m[q.name] = SubscriptionInfo{Name: q.name, Mode: q.m.Mode(), Subscribers: len(q.subs)}
	}
	s.info.Store(&m)
}

// subscriptionInfo is the status of the query maintained for name, if any.
func (e *Engine) subscriptionInfo(name string) *SubscriptionInfo {
	m := e.subs.info.Load()
	if m == nil {
		return nil
	}
	if info, ok := (*m)[name]; ok {
		return &info
	}
	return nil
}

// subQuery is one maintained query and its subscribers.
type subQuery struct {
	name string
	m    Maintained
	deps []string
	pos  position.LSN // of the last event
	subs map[*Subscription]struct{}
}

// SubscriptionInfo describes one maintained query, for status.
type SubscriptionInfo struct {
	Name        string `json:"-"`
	Mode        string `json:"mode"`
	Subscribers int    `json:"subscribers"`
}

// Subscriptions lists the maintained queries, without waiting for a write
// transaction.
func (e *Engine) Subscriptions() []SubscriptionInfo {
	var out []SubscriptionInfo
	if m := e.subs.info.Load(); m != nil {
		for _, info := range *m {
			out = append(out, info)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Subscribe starts a subscription to the rows of a dataset or view (name). The
// store maintains the view's query (or the dataset's table) incrementally where
// it can; a query it cannot maintain so is computed again on every change of
// its inputs, which the log and Mode say. The subscription ends when ctx does.
func (e *Engine) Subscribe(ctx context.Context, name string) (*Subscription, error) {
	return e.SubscribeSince(ctx, name, 0)
}

// SubscribeSince is Subscribe for a subscriber whose rows already reflect
// since: the snapshot is at or past it. The engine waits, up to
// MinPositionTimeout, for its inputs to get there (a subscriber that comes
// back after this runtime restarted from an older stored position, or that
// moves to a replica further behind, must not go back in the source's
// history), and answers a PositionError otherwise.
func (e *Engine) SubscribeSince(ctx context.Context, name string, since position.LSN) (*Subscription, error) {
	mt, ok := e.store.(Maintainer)
	if !ok {
		return nil, fmt.Errorf("subscribe to %s: %w", name, ErrNotSubscribable)
	}
	key := strings.ToLower(name)
	query, deps, err := e.subscribable(key)
	if err != nil {
		return nil, fmt.Errorf("subscribe to %s: %w", name, err)
	}
	if _, _, err := e.waitPosition(ctx, deps, since); err != nil {
		return nil, fmt.Errorf("subscribe to %s: %w", name, err)
	}
	e.subs.mu.Lock()
	defer e.subs.mu.Unlock()
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("subscribe to %s: %w", name, ErrClosed)
	}
	if e.subs.wm == nil {
		wm, err := e.store.Watermarks(ctx)
		if err != nil {
			return nil, fmt.Errorf("subscribe to %s: %w", name, err)
		}
		e.subs.wm = wm
		e.subs.queries = map[string]*subQuery{}
	}
	q := e.subs.queries[key]
	var snap *Result
	if q == nil {
		var m Maintained
		err := e.store.Update(ctx, func(tx StoreTx) error {
			var err error
			m, snap, err = mt.Maintain(tx, query)
			return err
		})
		if err != nil {
			if m != nil {
				snap.Release()
				_ = m.Close(ctx)
			}
			return nil, fmt.Errorf("subscribe to %s: %w", name, err)
		}
		q = &subQuery{name: key, m: m, deps: deps, pos: e.subs.position(deps), subs: map[*Subscription]struct{}{}}
		e.subs.queries[key] = q
		e.Logger.Info("maintaining a subscribed query", "name", key, "mode", m.Mode())
	} else if snap, err = q.m.Rows(ctx); err != nil {
		return nil, fmt.Errorf("subscribe to %s: %w", name, err)
	}
	if q.pos < since { // a position read with the dataset's can only be as far
		snap.Release()
		e.dropUnsubscribedLocked(q)
		return nil, fmt.Errorf("subscribe to %s: %w", name, &PositionError{Want: since, Have: q.pos, Dataset: key, Waited: "the subscription's start"})
	}
	snap.Position = q.pos
	n := e.SubscriptionQueue
	if n <= 0 {
		n = DefaultSubscriptionQueue
	}
	s := &Subscription{Snapshot: snap, Position: q.pos, Mode: q.m.Mode(), events: make(chan SubscriptionEvent, n),
		owner: e, query: q, done: make(chan struct{})}
	q.subs[s] = struct{}{}
	e.subs.publishInfoLocked()
	go func() {
		select {
		case <-ctx.Done():
			e.subs.mu.Lock()
			e.endLocked(s, ctx.Err())
			e.subs.mu.Unlock()
		case <-s.done:
		}
	}()
	return s, nil
}

// dropUnsubscribedLocked stops maintaining q when nobody subscribes to it.
// The caller holds e.subs.mu.
func (e *Engine) dropUnsubscribedLocked(q *subQuery) {
	if len(q.subs) > 0 || e.subs.queries[q.name] != q {
		return
	}
	delete(e.subs.queries, q.name)
	if err := q.m.Close(context.Background()); err != nil {
		e.Logger.Warn("stop maintaining a subscribed query", "name", q.name, logging.ErrorKey, err)
	}
	e.subs.publishInfoLocked()
}

// subscribable returns the query a subscription to name maintains and what it
// depends on, or why it cannot be subscribed to yet.
func (e *Engine) subscribable(name string) (query string, deps []string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v, ok := e.views[name]; ok {
		if v.accelerated() {
			query, deps = "SELECT * FROM "+qualifiedIdent(name), []string{name}
		} else {
			query, deps = v.spec.SQL, v.deps
		}
		if !v.loaded() || !e.depsLoadedLocked(deps) {
			return "", nil, &NotReadyError{Dataset: name, State: v.state, Cause: v.lastErr}
		}
		return query, deps, nil
	}
	d, ok := e.datasets[name]
	if !ok {
		return "", nil, ErrUnknownDataset
	}
	if !d.spec.Accelerated() {
		return "", nil, fmt.Errorf("%w: subscriptions read the local copy; add an acceleration block to %s", ErrNotAccelerated, name)
	}
	if !d.loaded {
		return "", nil, &NotReadyError{Dataset: name, State: d.state, Cause: d.lastErr}
	}
	return "SELECT * FROM " + qualifiedIdent(name), []string{name}, nil
}

// qualifiedIdent quotes a dataset name as a table reference ("a.b" is table b
// of schema a).
func qualifiedIdent(name string) string {
	if schema, table, ok := strings.Cut(name, "."); ok {
		return Ident(schema) + "." + Ident(table)
	}
	return Ident(name)
}

// position is the least committed watermark of deps.
func (s *subscriptions) position(deps []string) position.LSN {
	var out position.LSN
	for i, d := range deps {
		if wm := s.wm[d]; i == 0 || wm < out {
			out = wm
		}
	}
	return out
}

// endLocked ends a subscription and forgets it; the last subscriber of a
// query stops its maintenance. The caller holds e.subs.mu.
func (e *Engine) endLocked(s *Subscription, err error) {
	if s.ended {
		return
	}
	s.ended, s.err = true, err
	close(s.events)
	close(s.done)
	q := s.query
	delete(q.subs, s)
	if len(q.subs) == 0 && e.subs.queries[q.name] == q {
		delete(e.subs.queries, q.name)
		if err := q.m.Close(context.Background()); err != nil {
			e.Logger.Warn("stop maintaining a subscribed query", "name", q.name, logging.ErrorKey, err)
		}
	}
	e.subs.publishInfoLocked()
}

// watermarkTx records the watermarks a transaction sets.
type watermarkTx struct {
	StoreTx
	set map[string]position.LSN
}

func (w *watermarkTx) SetWatermark(lsn position.LSN, datasets ...string) error {
	if err := w.StoreTx.SetWatermark(lsn, datasets...); err != nil {
		return err
	}
	for _, d := range datasets {
		w.set[strings.ToLower(d)] = lsn
	}
	return nil
}

// update runs fn in one store transaction, as Store.Update does, and brings
// every maintained query up to date in the same transaction; after the commit
// it sends each query's changes, with the position they reflect, to its
// subscribers. A query whose maintenance fails is dropped (its subscribers
// told to subscribe again) and the transaction fails, for its caller to retry
// without it.
func (e *Engine) update(ctx context.Context, fn func(StoreTx) error) error {
	e.subs.mu.Lock()
	defer e.subs.mu.Unlock()
	type pending struct {
		q    *subQuery
		diff Diff
	}
	var out []pending
	var failed *subQuery
	var resync []*subQuery
	set := map[string]position.LSN{}
	err := e.store.Update(ctx, func(tx StoreTx) error {
		if err := fn(&watermarkTx{StoreTx: tx, set: set}); err != nil {
			return err
		}
		for _, q := range e.subs.queries {
			d, err := q.m.Update(tx)
			if errors.Is(err, ErrResync) {
				resync = append(resync, q)
				continue
			}
			if err != nil {
				failed = q
				return fmt.Errorf("maintain subscribed query %s: %w", q.name, err)
			}
			out = append(out, pending{q, d})
		}
		return nil
	})
	for _, p := range out {
		p.q.m.Committed(err == nil)
	}
	if err != nil {
		for _, p := range out {
			p.diff.Release()
		}
		if failed != nil {
			e.Logger.Error("maintaining a subscribed query failed; its subscribers must subscribe again", "name", failed.name, logging.ErrorKey, err)
			for s := range failed.subs {
				e.endLocked(s, fmt.Errorf("%w: %v", ErrMaintenanceFailed, err))
			}
		}
		return err
	}
	if e.subs.wm == nil {
		return nil
	}
	for _, q := range resync {
		e.Logger.Info("subscribed rows replaced wholesale; subscribers take a new snapshot", "name", q.name)
		for s := range q.subs {
			e.endLocked(s, ErrResync)
		}
	}
	for d, lsn := range set {
		e.subs.wm[d] = lsn
	}
	for _, p := range out {
		pos := e.subs.position(p.q.deps)
		if p.diff.Empty() && pos <= p.q.pos {
			p.diff.Release()
			continue
		}
		if pos > p.q.pos {
			p.q.pos = pos
		}
		ev := SubscriptionEvent{Position: p.q.pos, Diff: p.diff}
		for s := range p.q.subs {
			ev.Diff.Retain()
			select {
			case s.events <- ev:
			default:
				ev.Diff.Release()
				e.endLocked(s, ErrSubscriberTooSlow)
			}
		}
		p.diff.Release()
	}
	return nil
}

// closeSubscriptions ends every subscription (the engine is closing).
func (e *Engine) closeSubscriptions() {
	e.subs.mu.Lock()
	defer e.subs.mu.Unlock()
	for _, q := range e.subs.queries {
		for s := range q.subs {
			e.endLocked(s, ErrClosed)
		}
	}
}
