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
	// DefaultLightBudget is how long a query may run in a light slot: one that
	// runs longer is moved to the heavy lane while it runs, and its text runs
	// in the heavy lane from then on.
	DefaultLightBudget = time.Second
)

// Admission bounds the queries the store runs at once, in two lanes, and keeps
// ad-hoc heavy queries from starving cheap reads whatever their texts.
//
// A query is heavy when its shape says so (a table function such as range(),
// a dataset read from its source, a name that is no dataset or view) or when
// its text last ran longer than LightBudget. Heavy queries take at most
// HeavySlots of the Slots, so the others always serve light ones: the
// rankings, the api's reads, a chained runtime's reads.
//
// A light query's lane follows what it costs while it runs, not only its
// text's history: when it has held a light slot for LightBudget, it moves to
// the heavy lane if that has room, and is otherwise stopped (DuckDB is
// interrupted) and queued in the heavy lane to run again from the start. Its
// text then counts as heavy until a run of it ends within LightBudget.
//
// A text never seen before runs in a light slot on trial only while a trial
// slot is free: at most Slots-HeavySlots-1 at once, so at least one slot always
// stays for texts that have run cheaply before. When none is free it runs in
// the heavy lane. Fresh texts (a unique comment, a changed literal) therefore
// cannot fill the light lane, however many arrive.
//
// The engine's own work (change apply, view maintenance, a chained runtime's
// subscription) does not pass through admission: it runs on the store's write
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
	// LightBudget bounds a query's run in a light slot (see above);
	// DefaultLightBudget when zero.
	LightBudget time.Duration

	once              sync.Once
	all, heavy, trial chan struct{}
	queuedLight       atomic.Int64
	queuedHeavy       atomic.Int64
	moved, restarted  atomic.Uint64
}

// lane is where a query waits and runs.
type lane uint8

const (
	laneLight lane = iota // a text that ran cheaply before
	laneTrial             // a new text of light shape, on trial
	laneHeavy
)

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
		a.trial = make(chan struct{}, a.Slots-a.HeavySlots-1)
	})
}

// slot is one query's hold on admission; release gives back what it holds.
type slot struct {
	a     *Admission
	mu    sync.Mutex
	lane  lane
	trial bool // holds a trial token
	done  bool
}

// acquire waits for a slot of lane and returns it. A trial query that finds no
// free trial token waits in the heavy lane instead. It fails with ErrBusy when
// the lane's queue is full or the wait exceeds QueueTimeout, and with ctx's
// error when ctx ends first.
func (a *Admission) acquire(ctx context.Context, ln lane) (*slot, error) {
	a.init()
	s := &slot{a: a, lane: ln}
	if ln == laneTrial {
		select {
		case a.trial <- struct{}{}:
			s.trial = true
		default:
			s.lane = laneHeavy
		}
	}
	if s.lane == laneHeavy {
		if err := a.take(ctx, a.heavy, &a.queuedHeavy, "heavy"); err != nil {
			return nil, err
		}
		if err := a.take(ctx, a.all, &a.queuedHeavy, "heavy"); err != nil {
			<-a.heavy
			return nil, err
		}
		return s, nil
	}
	if err := a.take(ctx, a.all, &a.queuedLight, "light"); err != nil {
		if s.trial {
			<-a.trial
		}
		return nil, err
	}
	return s, nil
}

// release gives the slot back; it may be called more than once.
func (s *slot) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.done = true
	<-s.a.all
	if s.lane == laneHeavy {
		<-s.a.heavy
	}
	if s.trial {
		<-s.a.trial
	}
}

// light reports whether the slot is in the light lane (trial included).
func (s *slot) light() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lane != laneHeavy
}

// moveHeavy moves a running light query to the heavy lane when the heavy lane
// has room, without waiting, and reports whether the query holds a heavy slot
// now. It reports false for a released slot.
func (s *slot) moveHeavy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.done:
		return false
	case s.lane == laneHeavy:
		return true
	}
	select {
	case s.a.heavy <- struct{}{}:
	default:
		return false
	}
	s.lane = laneHeavy
	if s.trial {
		<-s.a.trial
		s.trial = false
	}
	s.a.moved.Add(1)
	return true
}

func (a *Admission) take(ctx context.Context, slots chan struct{}, queued *atomic.Int64, lane string) error {
	select {
	case slots <- struct{}{}:
		return nil
	default:
	}
	if n := queued.Add(1); n > int64(a.MaxQueued) {
		queued.Add(-1)
		return fmt.Errorf("%w: %d %s queries already wait for one of %d query slots; retry after a second, or make queries cheaper (heavy: table functions, sources, or a run over %s)",
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

// AdmissionStats describes the lanes at one moment, and what was moved out of
// the light lane since the engine started.
type AdmissionStats struct {
	Running, RunningHeavy, OnTrial int
	QueuedLight, QueuedHeavy       int
	// Moved counts light queries moved to the heavy lane while they ran;
	// Restarted those stopped because the heavy lane was full, and queued there.
	Moved, Restarted uint64
}

// Stats returns the lanes' state.
func (a *Admission) Stats() AdmissionStats {
	a.init()
	return AdmissionStats{
		Running: len(a.all), RunningHeavy: len(a.heavy), OnTrial: len(a.trial),
		QueuedLight: int(a.queuedLight.Load()), QueuedHeavy: int(a.queuedHeavy.Load()),
		Moved: a.moved.Load(), Restarted: a.restarted.Load(),
	}
}
