package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// Defaults of Workload.
const (
	DefaultWriteRate        = 50
	DefaultReadersPerPath   = 2
	DefaultReadPause        = 50 * time.Millisecond
	DefaultWatermarkEvery   = 500 * time.Millisecond
	DefaultWritesInFlight   = 32
	defaultMaxOrderQuantity = 5
)

// Workload writes orders at a steady rate and reads the three rankings
// continuously while a round runs, recording everything the checker needs.
type Workload struct {
	Client   *Client
	Products []int64 // product ids to order; required
	// WriteRate is orders per second (DefaultWriteRate); a write is skipped
	// when DefaultWritesInFlight writes are still waiting for an answer.
	WriteRate float64
	// ReadersPerPath readers read each ranking (DefaultReadersPerPath); every
	// second one sends the latest write token as Spice-Min-Position.
	ReadersPerPath int

	token   atomic.Uint64 // highest acknowledged position
	pacer   *bench.RatePacer
	mu      sync.Mutex
	acks    []Ack
	writes  []Read
	readers [][]Read
	marks   []WatermarkSample
	samples []RuntimeSample

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Open starts the writer, the readers and the watermark watcher.
func (w *Workload) Open() {
	if w.WriteRate <= 0 {
		w.WriteRate = DefaultWriteRate
	}
	if w.ReadersPerPath <= 0 {
		w.ReadersPerPath = DefaultReadersPerPath
	}
	w.pacer = bench.NewRatePacer(w.WriteRate)
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.wg.Add(2)
	go w.write(ctx)
	go w.watch(ctx)
	for _, ep := range RankingEndpoints {
		for i := range w.ReadersPerPath {
			w.mu.Lock()
			w.readers = append(w.readers, nil)
			slot := len(w.readers) - 1
			w.mu.Unlock()
			w.wg.Add(1)
			go w.read(ctx, slot, fmt.Sprintf("%s#%d", ep, i), ep, i%2 == 1)
		}
	}
}

// Close stops everything and waits for the requests in flight.
func (w *Workload) Close() {
	w.cancel()
	w.wg.Wait()
}

// SetRate changes the write rate (orders per second) from the next write on.
func (w *Workload) SetRate(rate float64) { w.pacer.SetRate(rate) }

// Skipped is how many writes were not sent because DefaultWritesInFlight
// writes were waiting for an answer: the writer asked more than the api took.
func (w *Workload) Skipped() int64 { return w.pacer.Skipped() }

// Token is the highest position any acknowledged write returned so far.
func (w *Workload) Token() position.LSN { return position.LSN(w.token.Load()) }

// write posts orders at the pacer's rate through vegeta: a random product
// and count each, its answer parsed into an acknowledgement. The writes in
// flight when the round ends are awaited: an answer on its way is an
// acknowledgement to record.
func (w *Workload) write(ctx context.Context) {
	defer w.wg.Done()
	targets := func(t *vegeta.Target) error {
		*t = vegeta.Target{Method: http.MethodPost, URL: w.Client.API + EndpointOrders,
			Header: http.Header{"Content-Type": {"application/json"}},
			Body:   fmt.Appendf(nil, `{"product_id":%d,"count":%d}`, w.Products[rand.IntN(len(w.Products))], 1+rand.Int64N(defaultMaxOrderQuantity))}
		return nil
	}
	a := vegeta.NewAttacker(vegeta.Client(w.Client.HTTP), vegeta.Workers(4), vegeta.MaxWorkers(DefaultWritesInFlight))
	stop := context.AfterFunc(ctx, func() { a.Stop() })
	defer stop()
	for res := range a.Attack(targets, w.pacer, 0, "") {
		ack, rd, ok := orderOf(res)
		w.mu.Lock()
		w.writes = append(w.writes, rd)
		if ok {
			w.acks = append(w.acks, ack)
		}
		w.mu.Unlock()
		for ok {
			cur := w.token.Load()
			if uint64(ack.Position) <= cur || w.token.CompareAndSwap(cur, uint64(ack.Position)) {
				break
			}
		}
	}
}

func (w *Workload) read(ctx context.Context, slot int, name, endpoint string, withToken bool) {
	defer w.wg.Done()
	var mine []Read
	defer func() {
		w.mu.Lock()
		w.readers[slot] = mine
		w.mu.Unlock()
	}()
	for ctx.Err() == nil {
		var min position.LSN
		if withToken {
			min = w.Token()
		}
		_, rd := w.Client.Ranking(ctx, name, endpoint, min, false)
		if ctx.Err() != nil {
			return // cut short by the end of the round, not by the stack
		}
		mine = append(mine, rd)
		pause := DefaultReadPause
		if !rd.OK() {
			pause = 200 * time.Millisecond
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
	}
}

func (w *Workload) watch(ctx context.Context) {
	defer w.wg.Done()
	t := time.NewTicker(DefaultWatermarkEvery)
	defer t.Stop()
	c := w.Client
	for {
		for _, rt := range []struct{ name, url, key string }{
			{"accelerated", c.AcceleratedURL, c.AcceleratedKey}, {"materialized", c.MaterializedURL, c.MaterializedKey},
		} {
			if rt.url == "" {
				continue
			}
			ss, err := c.Watermarks(ctx, rt.name, rt.url, rt.key)
			if err == nil {
				w.mu.Lock()
				w.marks = append(w.marks, ss...)
				w.mu.Unlock()
			}
			if smp, ok := c.Sample(ctx, rt.name, w.Token()); ok {
				w.mu.Lock()
				w.samples = append(w.samples, smp)
				w.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Samples returns the runtimes' memory and lag readings so far.
func (w *Workload) Samples() []RuntimeSample {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]RuntimeSample(nil), w.samples...)
}

// Results returns, after Close, the acknowledged orders, every answer (each
// reader's in its order, then the writer's) and the watermark samples.
func (w *Workload) Results() ([]Ack, []Read, []WatermarkSample) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var reads []Read
	for _, r := range w.readers {
		reads = append(reads, r...)
	}
	reads = append(reads, w.writes...)
	return append([]Ack(nil), w.acks...), reads, append([]WatermarkSample(nil), w.marks...)
}
