package bench

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moby/moby/client"

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
// position its connection saw (monotonic reads) or, after a write, the
// write's (read-your-writes); an answer older than that is a violation.
type FailoverResult struct {
	All         Summary
	Events      []FailoverEventResult
	Writes      int64
	WriteFails  int64
	WriteErrors []Reason // failed writes by status or transport error
	Violations  int64
}

// FailoverEventResult is one event: what it did and the reads that started in
// the Window after it.
type FailoverEventResult struct {
	Name, Detail, Err string
	At                time.Duration
	Reads             Summary
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
	cfg.Window = cmp.Or(cfg.Window, DefaultFailoverWindow)
	r := &failoverRun{c: c, cfg: cfg, start: time.Now(), all: NewRecorder()}
	for range cfg.Events {
		r.windows = append(r.windows, NewRecorder())
	}
	events := ctx // events run to their end, even past the load's
	ctx, cancel := context.WithDeadline(ctx, r.start.Add(cfg.Duration))
	defer cancel()
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Go(func() {
			var last position.LSN
			for ctx.Err() == nil {
				last = r.read(ctx, last)
			}
		})
	}
	w := NewWriter(c, cfg.WriteRate, r.start)
	w.For = cfg.Duration
	w.OnWrite = func(wr Write) { wg.Go(func() { r.read(ctx, wr.Token) }) }
	w.Open()
	res := FailoverResult{}
	for _, ev := range cfg.Events {
		if !sleepUntil(ctx, r.start.Add(ev.At)) {
			break
		}
		er := FailoverEventResult{Name: ev.Name, At: ev.At}
		detail, err := ev.Do(events)
		if er.Detail = detail; err != nil {
			er.Err = err.Error()
		}
		res.Events = append(res.Events, er)
	}
	w.Wait(events)
	w.Close()
	wg.Wait()
	r.all.AddElapsed(time.Since(r.start))
	res.All = r.all.Summary()
	for i := range res.Events {
		res.Events[i].Reads = r.windows[i].Summary()
	}
	ws := w.Summary()
	res.Writes, res.WriteFails, res.WriteErrors, res.Violations = ws.Requests, ws.Non2xx(), w.Failures(), r.violations.Load()
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
	status, h, msg := r.c.Do(ctx, http.MethodGet, r.cfg.Path, hdr, nil)
	if ctx.Err() != nil {
		return minPos
	}
	took := time.Since(r.start) - began
	r.all.Add(status, msg, took, 0, h)
	for i, ev := range r.cfg.Events {
		if began >= ev.At && began < ev.At+r.cfg.Window {
			r.windows[i].Add(status, msg, took, 0, h)
		}
	}
	got := positionOf(status, h)
	switch {
	case got.IsZero():
		return minPos
	case got < minPos:
		r.violations.Add(1)
		return minPos
	}
	return got
}

// FailoverMarkdown renders the result as a short Markdown report.
func FailoverMarkdown(cfg FailoverConfig, res FailoverResult) string {
	cfg.Window = cmp.Or(cfg.Window, DefaultFailoverWindow)
	return render("failover-report", struct {
		Config FailoverConfig
		Result FailoverResult
	}{cfg, res})
}

// Replicas drives a scaled compose service for the failover scenario.
type Replicas struct {
	Stack   *Stack
	Service string
}

// Running is how many containers of the service run.
func (r *Replicas) Running(ctx context.Context) (int, error) {
	cs, err := r.Stack.Containers(ctx, r.Service, false)
	return len(cs), err
}

// Kill SIGKILLs the second replica and removes it, as a lost node; it returns
// the replica's address.
func (r *Replicas) Kill(ctx context.Context) (string, error) {
	cs, err := r.Stack.Containers(ctx, r.Service, false)
	if err != nil || len(cs) < 2 {
		return "", cmp.Or(err, fmt.Errorf("%d replicas of %s: nothing to kill", len(cs), r.Service))
	}
	var addr string
	for _, n := range cs[1].NetworkSettings.Networks {
		addr = n.IPAddress.String()
	}
	cli := r.Stack.cli
	if _, err := cli.ContainerKill(ctx, cs[1].ID, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return addr, fmt.Errorf("kill a replica of %s: %w", r.Service, err)
	}
	_, err = cli.ContainerRemove(ctx, cs[1].ID, client.ContainerRemoveOptions{Force: true})
	return addr, err
}

// Scale sets the service's replicas (compose up --scale).
func (r *Replicas) Scale(ctx context.Context, n int) error {
	_, err := r.Stack.Run(ctx, "up", "-d", "--no-deps", "--no-recreate", "--scale", fmt.Sprintf("%s=%d", r.Service, n), r.Service)
	return err
}

// Ejection reads the api's log since a time for when it stopped trusting the
// replica at addr, killed at killed.
func (r *Replicas) Ejection(ctx context.Context, since time.Time, addr string, killed time.Time) []string {
	logs, err := r.Stack.Logs(ctx, "api", since)
	if err != nil {
		return []string{"api log: " + err.Error()}
	}
	var lines []string
	seen := map[string]bool{} // the first of each: a replica added later may reuse the address
	sc := bufio.NewScanner(strings.NewReader(logs))
	for sc.Scan() {
		f := logFields(sc.Text())
		if !strings.HasPrefix(f["addr"], addr+":") || seen[f["msg"]] {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, f["time"])
		if what := f["msg"]; err == nil && (what == "replica unhealthy" || what == "replica ejected" || what == "replica left") {
			seen[what] = true
			lines = append(lines, fmt.Sprintf("api log: %q %.0f ms after the SIGKILL", what, float64(at.Sub(killed))/float64(time.Millisecond)))
		}
	}
	if len(lines) == 0 {
		return []string{"api log: no line about " + addr + " (LOG_LEVEL must be info or debug)"}
	}
	return lines
}
