package live

import (
	"context"
	"sync"
	"time"

	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// Hello is the first event a viewer gets: the paths in page order, whether
// posting needs a key, and the orders the hub remembers.
type Hello struct {
	Paths    []PathInfo `json:"paths"`
	WriteKey bool       `json:"write_key"`
	Writes   []Write    `json:"writes"`
	// MaxViewers is how many pages the api serves at once.
	MaxViewers int `json:"max_viewers"`
	// Missed, for a browser that reconnects, is how many ticks were taken
	// since the last one it saw; absent for a new viewer.
	Missed *uint64 `json:"missed,omitempty"`
}

// PathInfo names a path.
type PathInfo struct {
	Name  string `json:"name"`
	Title string `json:"title"`
}

// Tick is one sample of every path.
type Tick struct {
	Seq uint64    `json:"seq"`
	At  time.Time `json:"at"`
	// Head is Postgres's position (pg_current_wal_lsn()) when it was read;
	// empty when Postgres did not answer.
	Head  string      `json:"head,omitempty"`
	Paths []PathState `json:"paths"`
	// Writes are the orders that are new or changed since the previous tick.
	Writes []Write `json:"writes"`
}

// PathState is one path in a tick.
type PathState struct {
	Name string `json:"name"`
	// Position is the position the answer reflects.
	Position string        `json:"position,omitempty"`
	Rows     []ranking.Row `json:"rows"`
	// LagBytes is how far behind the head the answer is, in bytes of WAL; nil
	// when either position is unknown. Zero for Postgres itself.
	LagBytes *uint64 `json:"lag_bytes"`
	// ReadMS is how long the read took.
	ReadMS float64 `json:"read_ms"`
	// Error is why the read failed; empty on success.
	Error    string    `json:"error,omitempty"`
	Replicas []Replica `json:"replicas"` // null for Postgres; [] when none is known
}

// Replica is one replica of a runtime path as the api's pool sees it.
type Replica struct {
	Addr     string `json:"addr"`
	Up       bool   `json:"up"`      // healthy and not ejected: it gets reads
	Healthy  bool   `json:"healthy"` // grpc.health.v1 says SERVING
	Ejected  bool   `json:"ejected"` // left out after failed reads
	Position string `json:"position,omitempty"`
}

// sample reads every path at once.
func (h *Hub) sample(ctx context.Context) Tick {
	ev := Tick{Seq: h.seq.Add(1), At: time.Now().UTC(), Paths: make([]PathState, len(h.paths))}
	positions := make([]position.LSN, len(h.paths))
	var wg sync.WaitGroup
	for i, p := range h.paths {
		wg.Go(func() {
			ev.Paths[i], positions[i] = h.read(ctx, p)
		})
	}
	wg.Wait()
	head := positions[0]
	if ev.Paths[0].Error == "" && !head.IsZero() {
		ev.Head = head.String()
	}
	for i := range ev.Paths {
		if ev.Head == "" || ev.Paths[i].Error != "" || positions[i].IsZero() {
			continue
		}
		lag := uint64(0)
		if positions[i] < head { // read at about the same time: a runtime may be a little ahead
			lag = uint64(head - positions[i])
		}
		ev.Paths[i].LagBytes = &lag
	}
	ev.Writes = h.writes.changed()
	return ev
}

// read reads one path's ranking and its replicas' health.
func (h *Hub) read(ctx context.Context, p Path) (PathState, position.LSN) {
	st := PathState{Name: p.Name}
	ctx, cancel := context.WithTimeout(ctx, h.ReadTimeout)
	defer cancel()
	start := time.Now()
	res, err := p.Reader.Ranking(ctx, ranking.Request{})
	st.ReadMS = ms(time.Since(start))
	if err != nil {
		st.Error = err.Error()
	} else {
		st.Rows = res.Rows
		if !res.Position.IsZero() {
			st.Position = res.Position.String()
		}
	}
	if st.Rows == nil {
		st.Rows = []ranking.Row{}
	}
	if p.Replicas != nil {
		for _, r := range p.Replicas() {
			rep := Replica{Addr: r.Addr, Healthy: r.Healthy, Ejected: r.Ejected, Up: r.Healthy && !r.Ejected}
			if !r.Position.IsZero() {
				rep.Position = r.Position.String()
			}
			st.Replicas = append(st.Replicas, rep)
		}
		if st.Replicas == nil {
			st.Replicas = []Replica{}
		}
	}
	return st, res.Position
}

// ms is d in milliseconds, to a tenth.
func ms(d time.Duration) float64 {
	return float64(d.Round(100*time.Microsecond)) / float64(time.Millisecond)
}
