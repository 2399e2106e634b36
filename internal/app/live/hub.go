package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/app/replicas"
)

// Defaults of the Hub's tunables.
const (
	// DefaultInterval is how often the paths are sampled while someone watches.
	DefaultInterval = 300 * time.Millisecond
	// DefaultMinGap is the least time between two samples: orders posted in a
	// burst share the samples they ask for.
	DefaultMinGap = 50 * time.Millisecond
	// DefaultReadTimeout bounds one sample's read of one path. Postgres
	// aggregates every order per read, which takes seconds at millions of
	// orders; the next sample waits for the slowest read.
	DefaultReadTimeout = 5 * time.Second
	// DefaultBuffer is how many events may wait for one viewer before it is
	// disconnected.
	DefaultBuffer = 8
	// DefaultMaxProbes bounds the orders followed at once.
	DefaultMaxProbes = 4
	// DefaultProbeTimeout bounds how long an order is followed on one path.
	DefaultProbeTimeout = 15 * time.Second
	// DefaultKeepWrites is how many orders the hub remembers for new viewers.
	DefaultKeepWrites = 300
)

// Names of the three paths, as the page and the events name them.
const (
	PathPostgres     = "postgres"
	PathAccelerated  = "accelerated"
	PathMaterialized = "materialized"
)

// Reader reads one path's ranking; *orders.Store and *replicas.Pool implement it.
type Reader interface {
	Ranking(ctx context.Context, req ranking.Request) (ranking.Result, error)
}

// Path is one way to read the ranking.
type Path struct {
	Name   string // PathPostgres, PathAccelerated or PathMaterialized
	Title  string // what the page heads it with; Name when empty
	Reader Reader
	// Replicas lists the path's replicas with their health; nil for Postgres.
	Replicas func() []replicas.Status
}

// Hub samples the paths for every viewer. Set the exported fields before Open.
type Hub struct {
	// Interval: DefaultInterval when zero.
	Interval time.Duration
	// MinGap: DefaultMinGap when zero.
	MinGap time.Duration
	// ReadTimeout: DefaultReadTimeout when zero.
	ReadTimeout time.Duration
	// Buffer: DefaultBuffer when zero.
	Buffer int
	// MaxProbes: DefaultMaxProbes when zero.
	MaxProbes int
	// ProbeTimeout: DefaultProbeTimeout when zero.
	ProbeTimeout time.Duration
	// KeepWrites: DefaultKeepWrites when zero.
	KeepWrites int
	// WriteTimeout bounds writing one event to a viewer, which is
	// disconnected when it takes longer; DefaultWriteTimeout when zero.
	WriteTimeout time.Duration
	// MaxViewers bounds the viewers connected at once; /live/events answers
	// 503 past it. DefaultMaxViewers when zero.
	MaxViewers int
	// SendBuffer is an event stream's socket send buffer, in bytes, where the
	// server's ConnContext is this package's; DefaultSendBuffer when zero.
	SendBuffer int
	// WriteKey tells the page that POST /orders needs a key (the key itself is
	// never sent to the page).
	WriteKey bool
	// Logger: slog.Default() when nil.
	Logger *slog.Logger

	paths []Path

	mu      sync.Mutex
	viewers map[*viewer]struct{}
	last    []byte // the last tick, as an SSE frame
	joined  chan struct{}
	nviewer atomic.Int32

	poke   chan struct{}
	probes chan struct{} // a slot per order followed

	writes   writeLog
	seq      atomic.Uint64
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	ticks    atomic.Uint64
	followed atomic.Uint64
	sent     atomic.Uint64 // bytes written to viewers
	dropped  atomic.Uint64 // viewers dropped for falling behind
}

// errFull refuses a viewer past MaxViewers.
var errFull = errors.New("too many viewers")

// NewHub returns a hub over the paths, Postgres first: its position is the head
// that the others' lag is measured against.
func NewHub(paths ...Path) *Hub {
	return &Hub{paths: paths}
}

// Open checks the paths and starts the sampling loop.
func (h *Hub) Open() error {
	if len(h.paths) == 0 || h.paths[0].Name != PathPostgres {
		return errors.New("open live hub: the first path must be postgres")
	}
	for _, p := range h.paths {
		if p.Reader == nil {
			return fmt.Errorf("open live hub: path %s has no reader", p.Name)
		}
	}
	h.Interval = orDefault(h.Interval, DefaultInterval)
	h.MinGap = orDefault(h.MinGap, DefaultMinGap)
	h.ReadTimeout = orDefault(h.ReadTimeout, DefaultReadTimeout)
	h.ProbeTimeout = orDefault(h.ProbeTimeout, DefaultProbeTimeout)
	h.WriteTimeout = orDefault(h.WriteTimeout, DefaultWriteTimeout)
	h.MaxViewers = orDefault(h.MaxViewers, DefaultMaxViewers)
	h.SendBuffer = orDefault(h.SendBuffer, DefaultSendBuffer)
	h.Buffer = orDefault(h.Buffer, DefaultBuffer)
	h.MaxProbes = orDefault(h.MaxProbes, DefaultMaxProbes)
	h.writes.keep = orDefault(h.KeepWrites, DefaultKeepWrites)
	if h.Logger == nil {
		h.Logger = slog.Default()
	}
	h.viewers = map[*viewer]struct{}{}
	h.joined = make(chan struct{}, 1)
	h.poke = make(chan struct{}, 1)
	h.probes = make(chan struct{}, h.MaxProbes)
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.loop()
	}()
	return nil
}

// Close stops the loop and the orders being followed and disconnects every
// viewer.
func (h *Hub) Close() error {
	if h.cancel == nil {
		return nil
	}
	h.cancel()
	h.wg.Wait()
	h.mu.Lock()
	for v := range h.viewers {
		h.dropLocked(v)
	}
	h.mu.Unlock()
	return nil
}

// Viewers returns how many viewers are connected.
func (h *Hub) Viewers() int { return int(h.nviewer.Load()) }

// Dropped returns how many viewers were disconnected for falling behind.
func (h *Hub) Dropped() uint64 { return h.dropped.Load() }

// SentBytes returns the bytes written to viewers.
func (h *Hub) SentBytes() uint64 { return h.sent.Load() }

// Ticks returns how many samples the hub has taken.
func (h *Hub) Ticks() uint64 { return h.ticks.Load() }

// viewer is one connected page: the frames waiting for it, gone, closed when
// the hub drops it, and cut, which ends a write to it in progress.
type viewer struct {
	frames chan []byte
	gone   chan struct{}
	cut    func()
}

// join registers a viewer, or fails with errFull past MaxViewers; its first
// frame is the hello (the recent writes, the paths, and the ticks missed
// since lastSeen when it reconnects), then the last tick if there is one.
func (h *Hub) join(lastSeen uint64, cut func()) (*viewer, error) {
	if h.nviewer.Load() >= int32(h.MaxViewers) {
		return nil, errFull
	}
	hello, err := h.hello(lastSeen)
	if err != nil {
		return nil, err
	}
	v := &viewer{frames: make(chan []byte, h.Buffer+2), gone: make(chan struct{}), cut: cut}
	v.frames <- hello
	h.mu.Lock()
	if len(h.viewers) >= h.MaxViewers {
		h.mu.Unlock()
		return nil, errFull
	}
	if h.last != nil {
		v.frames <- h.last
	}
	h.viewers[v] = struct{}{}
	h.nviewer.Store(int32(len(h.viewers)))
	h.mu.Unlock()
	select {
	case h.joined <- struct{}{}:
	default:
	}
	return v, nil
}

// leave unregisters a viewer that went away.
func (h *Hub) leave(v *viewer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropLocked(v)
}

func (h *Hub) dropLocked(v *viewer) {
	if _, ok := h.viewers[v]; !ok {
		return
	}
	delete(h.viewers, v)
	close(v.gone)
	if v.cut != nil {
		v.cut() // a write blocked on a full socket ends now
	}
	h.nviewer.Store(int32(len(h.viewers)))
}

// broadcast hands frame to every viewer without waiting: a viewer whose buffer
// is full is dropped.
func (h *Hub) broadcast(frame []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = frame
	for v := range h.viewers {
		select {
		case v.frames <- frame:
		default:
			h.Logger.Debug("live viewer too slow: disconnected", "buffer", h.Buffer)
			h.dropped.Add(1)
			h.dropLocked(v)
		}
	}
}

// loop samples the paths every Interval, and at once when poked, while
// anybody watches; with no viewer it waits for one.
func (h *Hub) loop() {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		if h.nviewer.Load() == 0 {
			h.mu.Lock()
			h.last = nil // a stale tick must not greet the next viewer
			h.mu.Unlock()
			select {
			case <-h.ctx.Done():
				return
			case <-h.joined:
			}
		}
		start := time.Now()
		h.tick()
		next := time.NewTimer(h.MinGap)
		select {
		case <-h.ctx.Done():
			next.Stop()
			return
		case <-next.C:
		}
		t.Reset(max(0, h.Interval-time.Since(start)))
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		case <-h.poke:
		case <-h.joined:
		}
	}
}

// Poke asks for a sample now (or after MinGap, if one just ran).
func (h *Hub) Poke() {
	select {
	case h.poke <- struct{}{}:
	default:
	}
}

func (h *Hub) tick() {
	ev := h.sample(h.ctx)
	frame, err := sseFrame("tick", ev.Seq, ev)
	if err != nil {
		h.Logger.Error("live: encode tick", "error", err)
		return
	}
	h.ticks.Add(1)
	h.broadcast(frame)
}

// hello is the frame a new viewer starts with; lastSeen is the last tick a
// reconnecting viewer saw (0: a new one).
func (h *Hub) hello(lastSeen uint64) ([]byte, error) {
	hello := Hello{WriteKey: h.WriteKey, Writes: h.writes.all(), MaxViewers: h.MaxViewers}
	for _, p := range h.paths {
		hello.Paths = append(hello.Paths, PathInfo{Name: p.Name, Title: p.title()})
	}
	if seq := h.seq.Load(); lastSeen > 0 && seq >= lastSeen {
		missed := seq - lastSeen
		hello.Missed = &missed
	}
	return sseFrame("hello", 0, hello)
}

// sseFrame encodes v as one server-sent event named name, with id when it is
// not 0 (the browser sends the last one back as Last-Event-ID when it
// reconnects).
func sseFrame(name string, id uint64, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(name)+40)
	if id != 0 {
		out = append(out, "id: "...)
		out = strconv.AppendUint(out, id, 10)
		out = append(out, '\n')
	}
	out = append(out, "event: "...)
	out = append(out, name...)
	out = append(out, "\ndata: "...)
	out = append(out, b...)
	return append(out, "\n\n"...), nil
}

func (p Path) title() string {
	if p.Title != "" {
		return p.Title
	}
	return p.Name
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
