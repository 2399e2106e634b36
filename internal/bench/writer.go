package bench

import (
	"bytes"
	"cmp"
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
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
	// MaxInFlight bounds outstanding writes; DefaultWriterMaxInFlight when zero.
	MaxInFlight int
	// OnWrite, when set, is called with each successful write once it is
	// kept; it must not block. Set it before Open.
	OnWrite func(Write)
	// For, when set, ends the writing by itself after this long (Wait); zero
	// writes until Close.
	For time.Duration

	rate   float64
	client *Client
	epoch  time.Time
	rec    *Recorder

	mu       sync.Mutex
	writes   []Write
	failures reasons // by status or transport error

	cancel context.CancelFunc
	done   chan struct{}
}

// NewWriter returns a Writer that posts through client at rate per second
// (none when zero) and stamps writes with their offset from epoch.
func NewWriter(client *Client, rate float64, epoch time.Time) *Writer {
	return &Writer{rate: rate, client: client, epoch: epoch, rec: NewRecorder(), failures: reasons{}}
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
		if w.rate > 0 {
			w.client.attack(ctx, tr, pacer{w.rate, w.For}, 0, min(limit, 16), limit, func(r *vegeta.Result) { w.result(r, start) })
		}
		w.rec.AddElapsed(max(w.For, time.Since(start)))
	}()
}

// Wait returns once the writing ended by itself (For) and every write in
// flight was answered, or ctx ended.
func (w *Writer) Wait(ctx context.Context) {
	select {
	case <-w.done:
	case <-ctx.Done():
	}
}

// Close stops writing and awaits the writes in flight.
func (w *Writer) Close() {
	if w.cancel != nil {
		w.cancel()
		<-w.done
	}
}

// result keeps one write; its latency runs from its due time, as the open
// loop's: a server that falls behind is charged for the queue.
func (w *Writer) result(r *vegeta.Result, start time.Time) {
	w.rec.Record(r, sinceDue(start, w.rate, r))
	w.mu.Lock()
	if r.Code/100 != 2 {
		example := ""
		if r.Code != ErrorStatus {
			example = firstLine(bytes.NewReader(r.Body))
		}
		w.failures.note(statusText(int(r.Code), errorKind(r.Error)), example)
	}
	token := positionOf(int(r.Code), r.Headers)
	wr := Write{Token: token, At: r.End().Sub(w.epoch)}
	if !token.IsZero() {
		w.writes = append(w.writes, wr)
	}
	w.mu.Unlock()
	if w.OnWrite != nil && !token.IsZero() {
		w.OnWrite(wr)
	}
}

// Failures returns the writes that were not 2xx, by status or transport
// error, with the first message of each; most frequent first.
func (w *Writer) Failures() []Reason {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failures.sorted()
}

// Writes returns the successful writes so far, in order of acknowledgement.
func (w *Writer) Writes() []Write {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.writes)
}

// Last is the write with the highest token so far; zero for none.
func (w *Writer) Last() Write {
	var last Write
	for _, wr := range w.Writes() {
		if wr.Token > last.Token {
			last = wr
		}
	}
	return last
}

// Summary returns the statistics of the writes (POST /orders) so far.
func (w *Writer) Summary() Summary { return w.rec.Summary() }
