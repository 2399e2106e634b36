package bench

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// DefaultFailoverWindow is how long after each event its own latencies are
// gathered ("p99 during the event").
const DefaultFailoverWindow = 5 * time.Second

// FailoverEvent is one thing done to the stack during the failover scenario:
// kill a replica, add one, scale down. Do returns what it did, for the report.
type FailoverEvent struct {
	Name string
	At   time.Duration // after the start of the load
	Do   func(ctx context.Context) (string, error)
}

// FailoverConfig is the failover scenario: a closed loop of Concurrency
// connections on Path for Duration while Events run, and writes at WriteRate
// each read back with Spice-Min-Position.
type FailoverConfig struct {
	Path        string
	Concurrency int
	Duration    time.Duration
	WriteRate   float64
	Window      time.Duration // DefaultFailoverWindow when zero
	Events      []FailoverEvent
}

// FailoverResult is what the scenario measured. Every read sends the last
// position its connection saw (monotonic reads) or, after a write, the write's
// (read-your-writes); an answer older than that is a violation.
type FailoverResult struct {
	All         Summary
	Events      []FailoverEventResult
	Writes      int64
	WriteFails  int64
	WriteErrors map[string]int64 // failed writes by status or transport error
	Violations  int64
}

// FailoverEventResult is one event: what it did and the reads that started in
// the Window after it.
type FailoverEventResult struct {
	Name   string
	At     time.Duration
	Detail string
	Err    string
	Reads  Summary
}

type failoverRun struct {
	c          *Client
	cfg        FailoverConfig
	start      time.Time
	all        *Recorder
	windows    []*Recorder
	violations atomic.Int64
}

// RunFailover runs the failover scenario.
func RunFailover(ctx context.Context, c *Client, cfg FailoverConfig) FailoverResult {
	if cfg.Window <= 0 {
		cfg.Window = DefaultFailoverWindow
	}
	r := &failoverRun{c: c, cfg: cfg, start: time.Now(), all: NewRecorder()}
	for range cfg.Events {
		r.windows = append(r.windows, NewRecorder())
	}
	events := ctx // events run to their end, even past the load's
	ctx, cancel := context.WithDeadline(ctx, r.start.Add(cfg.Duration))
	defer cancel()
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last position.LSN
			for ctx.Err() == nil {
				last = r.read(ctx, last)
			}
		}()
	}
	var writes, writeFails atomic.Int64
	var mu sync.Mutex
	writeErrors := map[string]int64{}
	if cfg.WriteRate > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pace(ctx, cfg.WriteRate, cfg.Duration, 100, func(time.Time) {
				s, hdr := c.Do(ctx, http.MethodPost, "/orders", nil, nil)
				writes.Add(1)
				if s.Status/100 != 2 {
					if ctx.Err() == nil {
						writeFails.Add(1)
						kind := s.Err
						if s.Status != ErrorStatus {
							kind = strconv.Itoa(s.Status)
						}
						mu.Lock()
						writeErrors[kind]++
						mu.Unlock()
					}
					return
				}
				pos, err := position.Parse(hdr.Get(wire.HeaderPosition))
				if err == nil {
					r.read(ctx, pos)
				}
			})
		}()
	}
	res := FailoverResult{}
	for _, ev := range cfg.Events {
		if !sleepUntil(ctx, r.start.Add(ev.At)) {
			break
		}
		er := FailoverEventResult{Name: ev.Name, At: ev.At}
		detail, err := ev.Do(events)
		er.Detail = detail
		if err != nil {
			er.Err = err.Error()
		}
		res.Events = append(res.Events, er)
	}
	wg.Wait()
	r.all.AddElapsed(time.Since(r.start))
	res.All = r.all.Summary()
	for i := range res.Events {
		res.Events[i].Reads = r.windows[i].Summary()
	}
	res.Writes, res.WriteFails, res.Violations = writes.Load(), writeFails.Load(), r.violations.Load()
	res.WriteErrors = writeErrors
	return res
}

// read sends one read with min as Spice-Min-Position and returns the position
// the answer reflects (min when there was none). Reads cut off by the end of
// the run are not recorded.
func (r *failoverRun) read(ctx context.Context, minPos position.LSN) position.LSN {
	var hdr http.Header
	if !minPos.IsZero() {
		hdr = http.Header{wire.HeaderMinPosition: {minPos.String()}}
	}
	began := time.Since(r.start)
	s, h := r.c.Do(ctx, http.MethodGet, r.cfg.Path, hdr, nil)
	if ctx.Err() != nil {
		return minPos
	}
	r.all.Record(s)
	for i, ev := range r.cfg.Events {
		if began >= ev.At && began < ev.At+r.cfg.Window {
			r.windows[i].Record(s)
		}
	}
	if s.Status/100 != 2 {
		return minPos
	}
	got, err := position.Parse(h.Get(wire.HeaderPosition))
	if err != nil {
		return minPos
	}
	if got < minPos {
		r.violations.Add(1)
		return minPos
	}
	return got
}

// FailoverMarkdown renders the result as a short Markdown report.
func FailoverMarkdown(cfg FailoverConfig, res FailoverResult) string {
	if cfg.Window <= 0 {
		cfg.Window = DefaultFailoverWindow
	}
	var b strings.Builder
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
	fmt.Fprintf(&b, "## Failover: closed loop of %d connections on %s for %s, %.0f writes/s\n\n",
		cfg.Concurrency, cfg.Path, cfg.Duration, cfg.WriteRate)
	fmt.Fprintf(&b, "| window | reads | non-2xx | p50 | p99 | max |\n|---|---:|---:|---:|---:|---:|\n")
	row := func(name string, s Summary) {
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s |\n", name, s.Requests, s.Non2xx(), ms(s.P50), ms(s.P99), ms(s.Slowest))
	}
	row("whole run", res.All)
	for _, ev := range res.Events {
		row(fmt.Sprintf("%s (+%s, next %s)", ev.Name, ev.At, cfg.Window), ev.Reads)
	}
	fmt.Fprintf(&b, "\nread-your-writes and monotonic-read violations: %d; writes: %d, failed: %d %v\n\n", res.Violations, res.Writes, res.WriteFails, res.WriteErrors)
	for _, ev := range res.Events {
		fmt.Fprintf(&b, "- +%s %s: %s", ev.At, ev.Name, ev.Detail)
		if ev.Err != "" {
			fmt.Fprintf(&b, " (error: %s)", ev.Err)
		}
		b.WriteString("\n")
	}
	if len(res.All.Errors) > 0 || len(res.All.StatusCodes) > 1 {
		fmt.Fprintf(&b, "\nstatus codes %v, transport errors %v\n", res.All.StatusCodes, res.All.Errors)
	}
	return b.String()
}
