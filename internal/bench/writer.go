package bench

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// Defaults of the Writer.
const (
	DefaultWriteRate         = 100.0
	DefaultWriterMaxInFlight = 64
	// PathOrders is where orders are written: an empty body asks for a random one.
	PathOrders = "/orders"
)

// Writer posts random orders at a fixed rate, open loop, and keeps the token and
// acknowledgement time of each successful write. Open starts it, Close stops it.
type Writer struct {
	// Rate is orders per second; nothing is written when zero.
	Rate float64
	// MaxInFlight bounds outstanding writes; DefaultWriterMaxInFlight when zero.
	MaxInFlight int
	// OnWrite, when set, is called with each successful write once it is kept,
	// from the write's own goroutine; it must not block. Set it before Open.
	OnWrite func(Write)
	// For, when set, ends the writing by itself after this long: no write is
	// due after it, and the writes in flight are awaited and counted (Wait).
	// Zero writes until Close.
	For time.Duration

	client *Client
	epoch  time.Time
	rec    *Recorder

	mu       sync.Mutex
	writes   []Write
	failures map[string]*Reason // by status or transport error

	cancel context.CancelFunc
	done   chan struct{}
}

// NewWriter returns a Writer that posts through client at rate per second and
// stamps writes with their offset from epoch.
func NewWriter(client *Client, rate float64, epoch time.Time) *Writer {
	return &Writer{Rate: rate, client: client, epoch: epoch, rec: NewRecorder()}
}

// Open starts writing in the background.
func (w *Writer) Open() {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel, w.done = cancel, make(chan struct{})
	limit := w.MaxInFlight
	if limit <= 0 {
		limit = DefaultWriterMaxInFlight
	}
	start := time.Now()
	go func() {
		defer close(w.done)
		if w.Rate > 0 {
			pace(ctx, w.Rate, w.For, limit, func(due time.Time) { w.post(ctx, due) })
		}
		// As Client.Open: never shorter than the schedule, longer when the
		// answers took longer, so the achieved rate is never above the asked one.
		w.rec.AddElapsed(max(w.For, time.Since(start)))
	}()
}

// Wait returns once the writing ended by itself (For) and every write in flight
// was answered, or ctx ended.
func (w *Writer) Wait(ctx context.Context) {
	if w.done == nil {
		return
	}
	select {
	case <-w.done:
	case <-ctx.Done():
	}
}

// Close stops writing. Writes in flight are abandoned and not counted.
func (w *Writer) Close() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	<-w.done
	w.cancel = nil
}

// post writes one order due at due. Its latency runs from the due time, as the
// open loop's (Client.Open): a server that falls behind is charged for the queue.
func (w *Writer) post(ctx context.Context, due time.Time) {
	s, hdr := w.client.Do(ctx, http.MethodPost, PathOrders, nil, nil)
	at := time.Since(w.epoch)
	if ctx.Err() != nil {
		return
	}
	s.Latency = time.Since(due)
	w.rec.Record(s)
	if s.Status/100 != 2 || hdr == nil {
		w.fail(s)
		return
	}
	token, err := position.Parse(hdr.Get(wire.HeaderPosition))
	if err != nil || token.IsZero() {
		return
	}
	wr := Write{Token: token, At: at}
	w.mu.Lock()
	w.writes = append(w.writes, wr)
	w.mu.Unlock()
	if w.OnWrite != nil {
		w.OnWrite(wr)
	}
}

// fail counts a write that was not 2xx, keeping the first message per status.
func (w *Writer) fail(s Sample) {
	why := statusOf(s)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failures == nil {
		w.failures = map[string]*Reason{}
	}
	if w.failures[why] == nil {
		w.failures[why] = &Reason{Why: why}
		if s.Status != ErrorStatus {
			w.failures[why].Example = s.Err
		}
	}
	w.failures[why].Count++
}

// Failures returns the writes that were not 2xx, by status or transport error,
// with the first message of each; most frequent first.
func (w *Writer) Failures() []Reason {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Reason, 0, len(w.failures))
	for _, r := range w.failures {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Reason) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Why, b.Why)) })
	return out
}

// Writes returns the successful writes so far, in order of acknowledgement.
func (w *Writer) Writes() []Write {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Write(nil), w.writes...)
}

// Summary returns the statistics of the writes (POST /orders) so far.
func (w *Writer) Summary() Summary { return w.rec.Summary() }
