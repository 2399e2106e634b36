package bench

import (
	"context"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// Defaults of the Watch.
const (
	DefaultPollers      = 2
	DefaultPollInterval = 5 * time.Millisecond
)

// Probe is one hop's read: a GET of an API path, or a query posted to a runtime's
// HTTP API. The answer's Spice-Position says what the hop reflects.
type Probe struct {
	Hop    string // "accelerated"
	Method string // GET when empty
	URL    string // absolute
	Body   string // the SQL of a runtime query
}

// Watch polls every probe with dedicated goroutines, apart from the throughput
// load, so that every hop is watched at the same pace whichever scenario the load
// is running, and keeps, per poller, each position when it first appears. Open
// starts it, Close stops it.
//
// Polls use the results cache as any reader would: the runtimes key their cache by
// data version, so a cached answer is never older than the data.
type Watch struct {
	// Pollers per probe; DefaultPollers when zero. They start staggered, so a hop
	// is read about every Interval/Pollers.
	Pollers int
	// Interval is each poller's pause between its answer and its next request;
	// DefaultPollInterval when zero.
	Interval time.Duration

	probes []Probe
	client *Client
	epoch  time.Time

	mu     sync.Mutex
	obs    []Observation
	latest map[string]position.LSN
	polls  map[string]int64
	failed map[string]int64

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewWatch returns a Watch of probes over client (whose BaseURL must be empty:
// probe URLs are absolute), stamping observations with their offset from epoch.
func NewWatch(client *Client, probes []Probe, epoch time.Time) *Watch {
	return &Watch{
		probes: probes, client: client, epoch: epoch,
		latest: map[string]position.LSN{}, polls: map[string]int64{}, failed: map[string]int64{},
	}
}

// Open starts the pollers.
func (w *Watch) Open() {
	if w.Pollers <= 0 {
		w.Pollers = DefaultPollers
	}
	if w.Interval <= 0 {
		w.Interval = DefaultPollInterval
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	for _, p := range w.probes {
		for i := range w.Pollers {
			stagger := w.Interval * time.Duration(i) / time.Duration(w.Pollers)
			w.wg.Go(func() { w.poll(ctx, p, stagger) })
		}
	}
}

// Close stops the pollers and waits for them.
func (w *Watch) Close() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	w.wg.Wait()
	w.cancel = nil
}

func (w *Watch) poll(ctx context.Context, p Probe, stagger time.Duration) {
	if !sleepUntil(ctx, time.Now().Add(stagger)) {
		return
	}
	method := p.Method
	if method == "" {
		method = http.MethodGet
	}
	var last position.LSN
	for ctx.Err() == nil {
		var body io.Reader
		if p.Body != "" {
			body = strings.NewReader(p.Body)
		}
		s, hdr := w.client.Do(ctx, method, p.URL, nil, body)
		at := time.Since(w.epoch)
		if ctx.Err() != nil {
			return
		}
		pos := positionOf(s, hdr)
		w.note(p.Hop, at, pos, pos != last)
		if !pos.IsZero() {
			last = pos
		}
		if !sleepUntil(ctx, time.Now().Add(w.Interval)) {
			return
		}
	}
}

func positionOf(s Sample, hdr http.Header) position.LSN {
	if s.Status/100 != 2 || hdr == nil {
		return 0
	}
	pos, err := position.Parse(hdr.Get(position.HeaderPosition))
	if err != nil {
		return 0
	}
	return pos
}

func (w *Watch) note(hop string, at time.Duration, pos position.LSN, changed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls[hop]++
	if pos.IsZero() {
		w.failed[hop]++
		return
	}
	if changed {
		w.obs = append(w.obs, Observation{Hop: hop, At: at, Position: pos})
	}
	if pos > w.latest[hop] {
		w.latest[hop] = pos
	}
}

// Observations returns what the pollers saw so far.
func (w *Watch) Observations() []Observation {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Observation(nil), w.obs...)
}

// Reached reports whether every probed hop has reported token or later.
func (w *Watch) Reached(token position.LSN) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.probes {
		if w.latest[p.Hop] < token {
			return false
		}
	}
	return true
}

// Polls returns how many polls each hop had and how many of them failed or named
// no position.
func (w *Watch) Polls() (polls, failed map[string]int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.polls), maps.Clone(w.failed)
}
