package bench

import (
	"cmp"
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// DefaultFreshnessConcurrency bounds each hop's reads in flight. At 100 writes/s
// it covers lags up to about 1.3 s before a read has to wait for a slot.
const DefaultFreshnessConcurrency = 128

// DefaultFreshnessSample traces every 10th write through the hops. Every write
// still happens at the write rate; reading each one on every hop would add three
// reads per write, a load of its own on a small machine.
const DefaultFreshnessSample = 10

// Probe is one hop's read: a GET of an API path, or a query posted to a runtime's
// HTTP API. The answer's Spice-Position says what the hop reflects.
type Probe struct {
	Hop    string      // "accelerated"
	Method string      // GET when empty
	URL    string      // absolute
	Body   string      // the SQL of a runtime query
	Header http.Header // sent with every read (a runtime's API key)
}

// Watch measures visibility with the system's own read-your-writes mechanism:
// for each write it reads every hop once, with Spice-Min-Position set to the
// write's token, and the server answers only once it reflects that token (or
// fails after its own bound, about 10 s). The answer's arrival is when the write
// became visible there, plus one read's latency. Open starts it, Read
// hands it a write, Close stops it.
//
// Reads use the results cache as any reader would: with a minimum position a
// runtime never answers from data older than the token, cached or not.
type Watch struct {
	// Concurrency bounds each hop's reads in flight; DefaultFreshnessConcurrency
	// when zero. A read that finds no free slot waits for one, and is marked
	// Queued: its lag includes the wait.
	Concurrency int
	// Sample traces every Sample-th write (1: every write);
	// DefaultFreshnessSample when zero.
	Sample int

	probes []Probe
	client *Client
	epoch  time.Time

	mu      sync.Mutex
	open    bool
	seen    int     // writes offered while open
	traced  []Write // the sampled writes, read on every hop
	answers []Answer
	slots   []chan struct{} // per probe

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewWatch returns a Watch of probes over client (whose BaseURL must be empty:
// probe URLs are absolute), stamping answers with their offset from epoch.
func NewWatch(client *Client, probes []Probe, epoch time.Time) *Watch {
	return &Watch{probes: probes, client: client, epoch: epoch}
}

// Open makes Read start reads.
func (w *Watch) Open() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.Concurrency <= 0 {
		w.Concurrency = DefaultFreshnessConcurrency
	}
	if w.Sample <= 0 {
		w.Sample = DefaultFreshnessSample
	}
	w.slots = make([]chan struct{}, len(w.probes))
	for i := range w.slots {
		w.slots[i] = make(chan struct{}, w.Concurrency)
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.open = true
}

// Read starts one read of every hop for wr and returns at once. It does nothing
// unless the Watch is open. It is safe for concurrent use: the writer calls it
// from each write's goroutine.
func (w *Watch) Read(wr Write) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.open {
		return
	}
	w.seen++
	if (w.seen-1)%w.Sample != 0 {
		return
	}
	w.traced = append(w.traced, wr)
	for i, p := range w.probes {
		w.wg.Go(func() { w.read(p, w.slots[i], wr) })
	}
}

// Traced returns the writes that were read on every hop.
func (w *Watch) Traced() []Write {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Write(nil), w.traced...)
}

// Close stops taking writes and waits for the reads in flight until ctx ends;
// then it cancels the rest, which count as not seen (ReasonRunEnded).
func (w *Watch) Close(ctx context.Context) {
	w.mu.Lock()
	open := w.open
	w.open = false
	w.mu.Unlock()
	if !open {
		return
	}
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	w.cancel()
	<-done
}

// read waits for a slot of the hop, asks, and records the answer.
func (w *Watch) read(p Probe, slots chan struct{}, wr Write) {
	a := Answer{Hop: p.Hop, Write: wr}
	select {
	case slots <- struct{}{}:
	default:
		a.Queued = true
		select {
		case slots <- struct{}{}:
		case <-w.ctx.Done():
			a.At, a.Status, a.Err = time.Since(w.epoch), ErrorStatus, ReasonRunEnded
			w.record(a)
			return
		}
	}
	a.Status, a.Position, a.Err = askAt(w.ctx, w.client, p, wr.Token)
	a.At = time.Since(w.epoch)
	<-slots
	if a.Status == ErrorStatus && w.ctx.Err() != nil {
		a.Err = ReasonRunEnded
	}
	w.record(a)
}

// askAt sends p with Spice-Min-Position: token and reads the whole answer:
// its status (ErrorStatus when none came), its position, and why it failed.
func askAt(ctx context.Context, client *Client, p Probe, token position.LSN) (int, position.LSN, string) {
	hdr := p.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr.Set(wire.HeaderMinPosition, token.String())
	status, h, msg := client.Do(ctx, cmp.Or(p.Method, http.MethodGet), p.URL, hdr, strings.NewReader(p.Body))
	return status, positionOf(status, h), msg
}

func (w *Watch) record(a Answer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.answers = append(w.answers, a)
}

// Answers returns the answers so far.
func (w *Watch) Answers() []Answer {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Answer(nil), w.answers...)
}
