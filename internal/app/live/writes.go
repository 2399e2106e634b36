package live

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// Write is one order posted through the api, and when it became visible on
// each path.
type Write struct {
	ID        int64     `json:"id"`
	ProductID int64     `json:"product_id"`
	Count     int64     `json:"count"`
	LSN       string    `json:"lsn"`
	At        time.Time `json:"at"` // when the api began writing it
	// Followed is false for an order posted while MaxProbes others were being
	// followed: its Visible stays empty.
	Followed bool `json:"followed"`
	// Visible holds, per path name, the milliseconds from At until the path
	// first answered with a position at or past LSN (for Postgres: until the
	// commit returned). A path missing from it has not shown the order yet.
	Visible map[string]float64 `json:"visible"`
	// Errors holds, per path name, why following the order there failed.
	Errors map[string]string `json:"errors,omitempty"`

	version uint64
}

// OrderStore is the api's order store, which Orders wraps.
type OrderStore interface {
	Create(ctx context.Context, o orders.NewOrder) (orders.Order, position.LSN, error)
	CreateRandom(ctx context.Context) (orders.Order, position.LSN, error)
}

// Orders returns store, telling the hub of every order written through it.
// Nothing is recorded while no one watches.
func (h *Hub) Orders(store OrderStore) OrderStore {
	return &trackedStore{store: store, hub: h}
}

type trackedStore struct {
	store OrderStore
	hub   *Hub
}

func (s *trackedStore) Create(ctx context.Context, o orders.NewOrder) (orders.Order, position.LSN, error) {
	start := time.Now()
	order, token, err := s.store.Create(ctx, o)
	if err == nil {
		s.hub.written(order, token, start)
	}
	return order, token, err
}

func (s *trackedStore) CreateRandom(ctx context.Context) (orders.Order, position.LSN, error) {
	start := time.Now()
	order, token, err := s.store.CreateRandom(ctx)
	if err == nil {
		s.hub.written(order, token, start)
	}
	return order, token, err
}

// written records an order and follows it on every runtime path, when a probe
// slot is free.
func (h *Hub) written(o orders.Order, token position.LSN, start time.Time) {
	if h.nviewer.Load() == 0 || h.ctx.Err() != nil {
		return
	}
	w := &Write{ID: o.ID, ProductID: o.ProductID, Count: o.Count, LSN: token.String(), At: start.UTC(),
		Visible: map[string]float64{PathPostgres: ms(time.Since(start))}}
	select {
	case h.probes <- struct{}{}:
		w.Followed = true
	default:
	}
	h.writes.add(w)
	h.Poke()
	if !w.Followed {
		return
	}
	h.followed.Add(1)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer func() { <-h.probes }()
		h.follow(w.ID, token, start)
	}()
}

// follow reads each runtime path once with token as the minimum position and
// records when each answered.
func (h *Hub) follow(id int64, token position.LSN, start time.Time) {
	ctx, cancel := context.WithTimeout(h.ctx, h.ProbeTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range h.paths[1:] {
		wg.Go(func() {
			_, err := p.Reader.Ranking(ctx, ranking.Request{MinPosition: token, NoCache: true})
			h.writes.seen(id, p.Name, ms(time.Since(start)), err)
			h.Poke()
		})
	}
	wg.Wait()
}

// writeLog is the orders the hub remembers, newest last, with a version per
// change so that each tick carries only what changed.
type writeLog struct {
	keep int

	mu      sync.Mutex
	writes  []*Write
	version uint64 // of the last change
	sent    uint64 // the version the last tick carried
}

func (l *writeLog) add(w *Write) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.version++
	w.version = l.version
	l.writes = append(l.writes, w)
	if n := len(l.writes) - l.keep; n > 0 {
		l.writes = slices.Delete(l.writes, 0, n)
	}
}

func (l *writeLog) seen(id int64, path string, after float64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.IndexFunc(l.writes, func(w *Write) bool { return w.ID == id })
	if i < 0 {
		return
	}
	w := l.writes[i]
	if err != nil {
		if w.Errors == nil {
			w.Errors = map[string]string{}
		}
		w.Errors[path] = err.Error()
	} else {
		w.Visible[path] = after
	}
	l.version++
	w.version = l.version
}

// changed returns copies of the writes changed since the last call.
func (l *writeLog) changed() []Write {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []Write{}
	for _, w := range l.writes {
		if w.version > l.sent {
			out = append(out, w.clone())
		}
	}
	l.sent = l.version
	return out
}

// all returns copies of every write remembered.
func (l *writeLog) all() []Write {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Write, 0, len(l.writes))
	for _, w := range l.writes {
		out = append(out, w.clone())
	}
	return out
}

func (w *Write) clone() Write {
	c := *w
	c.Visible = make(map[string]float64, len(w.Visible))
	for k, v := range w.Visible {
		c.Visible[k] = v
	}
	if w.Errors != nil {
		c.Errors = make(map[string]string, len(w.Errors))
		for k, v := range w.Errors {
			c.Errors[k] = v
		}
	}
	return c
}
