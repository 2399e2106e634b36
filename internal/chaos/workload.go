package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
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
	reads   [][]Read // the writer's, then each reader's, in the order sent
	marks   []WatermarkSample
	samples []RuntimeSample

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Open starts the writer, the readers and the watcher of the runtimes'
// watermarks, memory and lag.
func (w *Workload) Open() {
	w.WriteRate = cmpOr(w.WriteRate, DefaultWriteRate)
	w.ReadersPerPath = cmpOr(w.ReadersPerPath, DefaultReadersPerPath)
	w.pacer = bench.NewRatePacer(w.WriteRate)
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.reads = make([][]Read, 1+len(RankingEndpoints)*w.ReadersPerPath)
	w.wg.Go(func() { w.write(ctx) })
	w.wg.Go(func() { w.watch(ctx) })
	for i, ep := range RankingEndpoints {
		for j := range w.ReadersPerPath {
			w.wg.Go(func() { w.read(ctx, 1+i*w.ReadersPerPath+j, fmt.Sprintf("%s#%d", ep, j), ep, j%2 == 1) })
		}
	}
}

// Close stops everything and waits for the requests in flight; a second
// Close does nothing.
func (w *Workload) Close() {
	if w.cancel != nil {
		w.cancel()
		w.wg.Wait()
		w.cancel = nil
	}
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
	targets := func(t *vegeta.Target) error {
		*t = vegeta.Target{Method: http.MethodPost, URL: w.Client.API + EndpointOrders,
			Header: http.Header{"Content-Type": {"application/json"}},
			Body:   fmt.Appendf(nil, `{"product_id":%d,"count":%d}`, w.Products[rand.IntN(len(w.Products))], 1+rand.Int64N(defaultMaxOrderQuantity))}
		return nil
	}
	a := vegeta.NewAttacker(vegeta.Client(w.Client.HTTP), vegeta.Workers(4), vegeta.MaxWorkers(DefaultWritesInFlight))
	defer context.AfterFunc(ctx, func() { a.Stop() })()
	for res := range a.Attack(targets, w.pacer, 0, "") {
		ack, rd, ok := orderOf(res)
		w.mu.Lock()
		w.reads[0] = append(w.reads[0], rd)
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

// read reads endpoint until the round ends, with the latest token when
// withToken; a failed read is followed by a longer pause.
func (w *Workload) read(ctx context.Context, slot int, name, endpoint string, withToken bool) {
	for pause := time.Duration(0); sleep(ctx, pause); {
		var min position.LSN
		if withToken {
			min = w.Token()
		}
		_, rd := w.Client.Ranking(ctx, name, endpoint, min, false)
		if ctx.Err() != nil {
			return // cut short by the end of the round, not by the stack
		}
		w.mu.Lock()
		w.reads[slot] = append(w.reads[slot], rd)
		w.mu.Unlock()
		if pause = DefaultReadPause; !rd.OK() {
			pause = 200 * time.Millisecond
		}
	}
}

func (w *Workload) watch(ctx context.Context) {
	for next := time.Now(); sleep(ctx, time.Until(next)); next = next.Add(DefaultWatermarkEvery) {
		for _, rt := range []string{ServiceAccelerated, ServiceMaterialized} {
			s, marks, ok := w.Client.Sample(ctx, rt, w.Token())
			w.mu.Lock()
			if w.marks = append(w.marks, marks...); ok {
				w.samples = append(w.samples, s)
			}
			w.mu.Unlock()
		}
	}
}

// Samples returns the runtimes' memory and lag readings so far.
func (w *Workload) Samples() []RuntimeSample {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.samples)
}

// Results returns, after Close, the acknowledged orders, every answer (the
// writer's, then each reader's in its order) and the watermark samples.
func (w *Workload) Results() ([]Ack, []Read, []WatermarkSample) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.acks), slices.Concat(w.reads...), slices.Clone(w.marks)
}

// sleep waits for d; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}
