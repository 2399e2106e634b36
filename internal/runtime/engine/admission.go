package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of Admission.
const (
	// DefaultSlots is how many queries run in the store at once; the duckdb
	// store's connection count is the natural value.
	DefaultSlots = 4
	// DefaultMaxQueued bounds the queries waiting for a slot, per lane.
	DefaultMaxQueued = 64
	// DefaultQueueTimeout bounds the wait for a slot; then the query is refused
	// with ErrBusy (503, Retry-After) rather than holding its client.
	DefaultQueueTimeout = 5 * time.Second
	// DefaultLightBudget: a light query that ran longer than this is treated as
	// heavy from then on.
	DefaultLightBudget = time.Second
)

// Admission bounds the queries the store runs at once, in two lanes. A query is
// light when it reads only accelerated datasets and views (no table functions
// such as range(), nothing read from a source) and has not run longer than
// LightBudget before; the rankings and a chained runtime's refresh are light.
// Every other query is heavy. Heavy queries may take at most HeavySlots of the
// Slots, so at least Slots-HeavySlots always remain for light ones: ad-hoc heavy
// queries cannot starve cheap reads. The engine's own work (change apply, view
// refresh) does not pass through admission: it runs on the store's write
// connections. Zero fields take the defaults.
type Admission struct {
	// Slots bounds concurrent store queries; DefaultSlots when zero.
	Slots int
	// HeavySlots bounds concurrent heavy queries; half the Slots (at least one,
	// at most Slots-1) when zero.
	HeavySlots int
	// MaxQueued bounds waiting queries per lane; DefaultMaxQueued when zero.
	// Beyond it a query is refused at once with ErrBusy.
	MaxQueued int
	// QueueTimeout bounds the wait for a slot; DefaultQueueTimeout when zero.
	QueueTimeout time.Duration
	// LightBudget demotes a light query text that ran longer to heavy;
	// DefaultLightBudget when zero.
	LightBudget time.Duration

	once        sync.Once
	all, heavy  chan struct{}
	queuedLight atomic.Int64
	queuedHeavy atomic.Int64
}

func (a *Admission) init() {
	a.once.Do(func() {
		if a.Slots <= 0 {
			a.Slots = DefaultSlots
		}
		if a.Slots < 2 {
			a.Slots = 2 // one heavy, one reserved for light
		}
		if a.HeavySlots <= 0 {
			a.HeavySlots = max(1, a.Slots/2)
		}
		a.HeavySlots = min(a.HeavySlots, a.Slots-1)
		if a.MaxQueued <= 0 {
			a.MaxQueued = DefaultMaxQueued
		}
		if a.QueueTimeout <= 0 {
			a.QueueTimeout = DefaultQueueTimeout
		}
		if a.LightBudget <= 0 {
			a.LightBudget = DefaultLightBudget
		}
		a.all = make(chan struct{}, a.Slots)
		a.heavy = make(chan struct{}, a.HeavySlots)
	})
}

// acquire waits for a slot of the query's lane and returns its release. It
// fails with ErrBusy when the lane's queue is full or the wait exceeds
// QueueTimeout, and with ctx's error when ctx ends first.
func (a *Admission) acquire(ctx context.Context, heavy bool) (func(), error) {
	a.init()
	if heavy {
		if err := a.take(ctx, a.heavy, &a.queuedHeavy, "heavy"); err != nil {
			return nil, err
		}
		if err := a.take(ctx, a.all, &a.queuedHeavy, "heavy"); err != nil {
			<-a.heavy
			return nil, err
		}
		return func() { <-a.all; <-a.heavy }, nil
	}
	if err := a.take(ctx, a.all, &a.queuedLight, "light"); err != nil {
		return nil, err
	}
	return func() { <-a.all }, nil
}

func (a *Admission) take(ctx context.Context, slots chan struct{}, queued *atomic.Int64, lane string) error {
	select {
	case slots <- struct{}{}:
		return nil
	default:
	}
	if n := queued.Add(1); n > int64(a.MaxQueued) {
		queued.Add(-1)
		return fmt.Errorf("%w: %d %s queries already wait for one of %d query slots; retry after a second, or make queries cheaper (heavy: table functions, sources, or a past run over %s)",
			ErrBusy, a.MaxQueued, lane, cap(slots), a.LightBudget)
	}
	defer queued.Add(-1)
	t := time.NewTimer(a.QueueTimeout)
	defer t.Stop()
	select {
	case slots <- struct{}{}:
		return nil
	case <-t.C:
		return fmt.Errorf("%w: no %s query slot freed within %s; retry after a second", ErrBusy, lane, a.QueueTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Running returns the queries holding a slot, all lanes and the heavy lane.
func (a *Admission) Running() (all, heavy int) {
	a.init()
	return len(a.all), len(a.heavy)
}
