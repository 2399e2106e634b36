package bench

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// Defaults of the Watch.
const (
	// DefaultFreshnessConcurrency bounds each hop's reads in flight. At 100
	// writes/s it covers lags up to about 1.3 s before a read has to wait.
	DefaultFreshnessConcurrency = 128
	// DefaultFreshnessSample traces every 10th write through the hops. Every
	// write still happens at the write rate; reading each one on every hop
	// would add three reads per write, a load of its own on a small machine.
	DefaultFreshnessSample = 10
)

// Hops of the watermark freshness: each runtime's own watermark of one
// dataset, without the api and without reading the data.
const (
	HopWatermarkAccelerated  = "runtime 1 watermark (orders)"
	HopWatermarkMaterialized = "runtime 2 watermark (rankings)"
)

// RuntimeEndpoint is where a runtime is read: its HTTP API, the API key it
// requires and its Prometheus endpoint.
type RuntimeEndpoint struct {
	URL     string // http://127.0.0.1:8090; none when empty
	APIKey  string // sent as X-API-Key; none when empty
	Metrics string // http://127.0.0.1:9090/metrics; none when empty
}

// Probe is one hop's read: a GET of an API path, or a query posted to a
// runtime's HTTP API. The answer's Spice-Position says what the hop reflects.
type Probe struct {
	Hop    string      // "accelerated"
	Method string      // GET when empty
	URL    string      // absolute
	Body   string      // the SQL of a runtime query
	Header http.Header // sent with every read (a runtime's API key)
}

// query is a probe posting sql to rt's HTTP API; none without a URL.
func query(hop string, rt RuntimeEndpoint, sql string) []Probe {
	if rt.URL == "" {
		return nil
	}
	p := Probe{Hop: hop, Method: http.MethodPost, URL: strings.TrimRight(rt.URL, "/") + "/v1/sql", Body: sql}
	if rt.APIKey != "" {
		p.Header = http.Header{"X-Api-Key": {rt.APIKey}}
	}
	return []Probe{p}
}

// watermarkProbes are the watermark hops of the runtimes whose HTTP API is
// known. Their queries read nothing (DuckDB folds WHERE false), but the
// answer waits, with Spice-Min-Position, until the runtime's watermark of the
// table covers the position; the engine wakes such a wait on every watermark
// change, so the answer's arrival is when the watermark covered the write,
// plus one trivial query's latency, with no polling interval.
func watermarkProbes(acc, mat RuntimeEndpoint) []Probe {
	return append(query(HopWatermarkAccelerated, acc, "SELECT 1 FROM orders WHERE false"),
		query(HopWatermarkMaterialized, mat, "SELECT 1 FROM rankings WHERE false")...)
}

func hopsOf(probes []Probe) []string {
	hops := make([]string, len(probes))
	for i, p := range probes {
		hops[i] = p.Hop
	}
	return hops
}

// askAt sends p with Spice-Min-Position: token and reads the whole answer:
// its status (ErrorStatus when none came), its position, and why it failed.
func askAt(ctx context.Context, client *Client, p Probe, token position.LSN) (int, position.LSN, string) {
	hdr := p.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr.Set(wire.HeaderMinPosition, token.String())
	status, h, msg := client.Do(ctx, cmp.Or(p.Method, http.MethodGet), p.URL, hdr, p.Body)
	return status, positionOf(status, h), msg
}

// CatchUp is how long one hop took to cover a position; OK false when it did
// not get there in time, Why the last answer.
type CatchUp struct {
	Hop  string        `json:"hop"`
	Time time.Duration `json:"time_ns"`
	OK   bool          `json:"ok"`
	Why  string        `json:"why,omitempty"`
}

// catchUp waits, hop after hop, until each probe answers at or past token
// (the servers hold such a read until they do), and returns the time from
// start to each; a hop that has not got there by deadline says why.
func catchUp(ctx context.Context, c *Client, probes []Probe, token position.LSN, start, deadline time.Time) []CatchUp {
	if token.IsZero() {
		return nil
	}
	var out []CatchUp
	for _, p := range probes {
		cu := CatchUp{Hop: p.Hop}
		for {
			status, pos, why := askAt(ctx, c, p, token)
			cu.Time = time.Since(start)
			if cu.OK = status/100 == 2 && pos >= token; cu.OK {
				break
			}
			cu.Why = cmp.Or(why, statusText(status, why))
			if ctx.Err() != nil || !time.Now().Before(deadline) {
				break
			}
			if status == ErrorStatus { // not listening yet: no wait in the answer
				sleepUntil(ctx, time.Now().Add(100*time.Millisecond))
			}
		}
		out = append(out, cu)
	}
	return out
}

// Sync writes one order through c and waits, up to timeout, until each probe
// reflects it; it returns each probe's catch-up, or an error when the write
// gave no token.
func Sync(ctx context.Context, c *Client, probes []Probe, timeout time.Duration) ([]CatchUp, error) {
	status, hdr, msg := c.Do(ctx, http.MethodPost, PathOrders, nil, "")
	token, start := positionOf(status, hdr), time.Now()
	if token.IsZero() {
		return nil, fmt.Errorf("POST /orders gave no token (%s)", statusText(status, msg))
	}
	return catchUp(ctx, c, probes, token, start, start.Add(timeout)), ctx.Err()
}

// Watch measures visibility with the system's own read-your-writes mechanism:
// for each traced write it reads every hop once, with Spice-Min-Position set
// to the write's token, and the server answers only once it reflects that
// token (or fails after its own bound, about 10 s). The answer's arrival is
// when the write became visible there, plus one read's latency. Open starts
// it, Read hands it a write, Close stops it.
//
// Reads use the results cache as any reader would: with a minimum position a
// runtime never answers from data older than the token, cached or not.
type Watch struct {
	probes []Probe
	client *Client
	epoch  time.Time

	mu      sync.Mutex
	open    bool
	sample  int     // every sample-th write is traced
	seen    int     // writes offered while open
	traced  []Write // the sampled writes, read on every hop
	answers []Answer
	slots   []chan struct{} // per probe: a read that finds none free waits, Queued

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewWatch returns a Watch that reads every sample-th write (1: every write)
// on probes through client, at most conc reads in flight per hop, stamping
// answers with their offset from epoch.
func NewWatch(client *Client, probes []Probe, epoch time.Time, conc, sample int) *Watch {
	w := &Watch{probes: probes, client: client, epoch: epoch, sample: max(sample, 1), slots: make([]chan struct{}, len(probes))}
	for i := range w.slots {
		w.slots[i] = make(chan struct{}, max(conc, 1))
	}
	return w
}

// Open makes Read start reads.
func (w *Watch) Open() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.open = true
}

// Read starts one read of every hop for wr, when it is a traced write, and
// returns at once. It does nothing unless the Watch is open. It is safe for
// concurrent use: the writer calls it from each write's goroutine.
func (w *Watch) Read(wr Write) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.open {
		return
	}
	if w.seen++; (w.seen-1)%w.sample != 0 {
		return
	}
	w.traced = append(w.traced, wr)
	for i, p := range w.probes {
		w.wg.Go(func() { w.read(p, w.slots[i], wr) })
	}
}

// Close stops taking writes and waits for the reads in flight until ctx ends;
// then it cancels the rest, which count as not seen (ReasonRunEnded). It
// returns the traced writes and their answers.
func (w *Watch) Close(ctx context.Context) ([]Write, []Answer) {
	w.mu.Lock()
	open := w.open
	w.open = false
	w.mu.Unlock()
	if open {
		done := make(chan struct{})
		go func() { w.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
		}
		w.cancel()
		<-done
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.traced, w.answers
}

// read waits for a slot of the hop, asks, and records the answer.
func (w *Watch) read(p Probe, slots chan struct{}, wr Write) {
	a, acquired := Answer{Hop: p.Hop, Write: wr}, true
	select {
	case slots <- struct{}{}:
	default:
		a.Queued = true
		select {
		case slots <- struct{}{}:
		case <-w.ctx.Done():
			acquired = false
		}
	}
	if acquired {
		a.Status, a.Position, a.Err = askAt(w.ctx, w.client, p, wr.Token)
		<-slots
	}
	if a.At = time.Since(w.epoch); a.Status == ErrorStatus && w.ctx.Err() != nil {
		a.Err = ReasonRunEnded
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.answers = append(w.answers, a)
}
