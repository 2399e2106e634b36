package bench

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

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

// Writer posts random orders at a fixed rate, open loop (vegeta), and keeps
// the token and acknowledgement time of each successful write. Open starts
// it, Close stops it.
type Writer struct {
	// Rate is orders per second; nothing is written when zero.
	Rate float64
	// MaxInFlight bounds outstanding writes; DefaultWriterMaxInFlight when zero.
	MaxInFlight int
	// OnWrite, when set, is called with each successful write once it is
	// kept; it must not block. Set it before Open.
	OnWrite func(Write)
	// For, when set, ends the writing by itself after this long (Wait); zero
	// writes until Close.
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
	return &Writer{Rate: rate, client: client, epoch: epoch, rec: NewRecorder(), failures: map[string]*Reason{}}
}

// Open starts writing in the background.
func (w *Writer) Open() {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel, w.done = cancel, make(chan struct{})
	limit := cmp.Or(w.MaxInFlight, DefaultWriterMaxInFlight)
	tr := vegeta.NewStaticTargeter(vegeta.Target{Method: http.MethodPost, URL: w.client.BaseURL + PathOrders})
	go func() {
		defer close(w.done)
		start := time.Now()
		if w.Rate > 0 {
			w.client.attack(ctx, tr, pacer{w.Rate, w.For}, 0, min(limit, 16), limit, func(r *vegeta.Result) { w.result(r, start) })
		}
		w.rec.AddElapsed(max(w.For, time.Since(start)))
	}()
}

// Wait returns once the writing ended by itself (For) and every write in
// flight was answered, or ctx ended.
func (w *Writer) Wait(ctx context.Context) {
	if w.done != nil {
		select {
		case <-w.done:
		case <-ctx.Done():
		}
	}
}

// Close stops writing and awaits the writes in flight.
func (w *Writer) Close() {
	if w.cancel != nil {
		w.cancel()
		<-w.done
		w.cancel = nil
	}
}

// result keeps one write; its latency runs from its due time, as the open
// loop's: a server that falls behind is charged for the queue.
func (w *Writer) result(r *vegeta.Result, start time.Time) {
	w.rec.Record(r, sinceDue(start, w.Rate, r))
	if r.Code/100 != 2 {
		w.fail(int(r.Code), string(r.Body), r.Error)
		return
	}
	token, err := position.Parse(r.Headers.Get(wire.HeaderPosition))
	if err != nil || token.IsZero() {
		return
	}
	wr := Write{Token: token, At: r.End().Sub(w.epoch)}
	w.mu.Lock()
	w.writes = append(w.writes, wr)
	w.mu.Unlock()
	if w.OnWrite != nil {
		w.OnWrite(wr)
	}
}

// fail counts a write that was not 2xx, keeping the first message per status.
func (w *Writer) fail(status int, body, transport string) {
	why := statusText(status, errorKind(transport))
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failures[why] == nil {
		w.failures[why] = &Reason{Why: why}
		if status != ErrorStatus {
			w.failures[why].Example = firstLine(strings.NewReader(body))
		}
	}
	w.failures[why].Count++
}

// Failures returns the writes that were not 2xx, by status or transport
// error, with the first message of each; most frequent first.
func (w *Writer) Failures() []Reason {
	w.mu.Lock()
	defer w.mu.Unlock()
	return sortedReasons(w.failures)
}

func sortedReasons(m map[string]*Reason) []Reason {
	var out []Reason
	for _, r := range m {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Reason) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Why, b.Why)) })
	return out
}

// Writes returns the successful writes so far, in order of acknowledgement.
func (w *Writer) Writes() []Write {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.writes)
}

// Summary returns the statistics of the writes (POST /orders) so far.
func (w *Writer) Summary() Summary { return w.rec.Summary() }
