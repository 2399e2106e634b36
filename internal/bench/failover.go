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
	Config      FailoverConfig
	All         Summary
	Events      []FailoverEventResult
	Writes      Summary
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

// RunFailover runs the failover scenario.
func RunFailover(ctx context.Context, c *Client, cfg FailoverConfig) FailoverResult {
	cfg.Window = cmp.Or(cfg.Window, DefaultFailoverWindow)
	start, all, windows := time.Now(), NewRecorder(), make([]*Recorder, len(cfg.Events))
	for i := range windows {
		windows[i] = NewRecorder()
	}
	var violations atomic.Int64
	// read sends one read with min as Spice-Min-Position and returns the
	// position the answer reflects (min when there was none). Reads cut off
	// by the end of the run are not recorded.
	read := func(ctx context.Context, min position.LSN) position.LSN {
		var hdr http.Header
		if !min.IsZero() {
			hdr = http.Header{wire.HeaderMinPosition: {min.String()}}
		}
		began := time.Since(start)
		status, h, msg := c.Do(ctx, http.MethodGet, cfg.Path, hdr, "")
		if ctx.Err() != nil {
			return min
		}
		took := time.Since(start) - began
		all.Add(status, msg, took, 0, h)
		for i, ev := range cfg.Events {
			if began >= ev.At && began < ev.At+cfg.Window {
				windows[i].Add(status, msg, took, 0, h)
			}
		}
		got := positionOf(status, h)
		if !got.IsZero() && got < min {
			violations.Add(1)
		}
		return max(got, min)
	}
	events := ctx // events run to their end, even past the load's
	ctx, cancel := context.WithDeadline(ctx, start.Add(cfg.Duration))
	defer cancel()
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Go(func() {
			for last := position.LSN(0); ctx.Err() == nil; {
				last = read(ctx, last)
			}
		})
	}
	w := NewWriter(c, cfg.WriteRate, start)
	w.For, w.OnWrite = cfg.Duration, func(wr Write) { wg.Go(func() { read(ctx, wr.Token) }) }
	w.Open()
	res := FailoverResult{Config: cfg}
	for _, ev := range cfg.Events {
		if !sleepUntil(ctx, start.Add(ev.At)) {
			break
		}
		detail, err := ev.Do(events)
		res.Events = append(res.Events, FailoverEventResult{Name: ev.Name, At: ev.At, Detail: detail, Err: errText(err)})
	}
	w.Wait(events)
	w.Close()
	wg.Wait()
	all.AddElapsed(time.Since(start))
	res.All, res.Writes, res.WriteErrors, res.Violations = all.Summary(), w.Summary(), w.Failures(), violations.Load()
	for i := range res.Events {
		res.Events[i].Reads = windows[i].Summary()
	}
	return res
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// FailoverMarkdown renders the result as a short Markdown report.
func FailoverMarkdown(res FailoverResult) string { return render("failover-report", res) }

// Replicas drives a scaled compose service for the failover scenario.
type Replicas struct {
	Stack   *Stack
	Service string
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
	if _, err := r.Stack.cli.ContainerKill(ctx, cs[1].ID, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return addr, fmt.Errorf("kill a replica of %s: %w", r.Service, err)
	}
	_, err = r.Stack.cli.ContainerRemove(ctx, cs[1].ID, client.ContainerRemoveOptions{Force: true})
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
	for sc := bufio.NewScanner(strings.NewReader(logs)); sc.Scan(); {
		f := logFields(sc.Text())
		what := f["msg"]
		at, err := time.Parse(time.RFC3339Nano, f["time"])
		if !strings.HasPrefix(f["addr"], addr+":") || seen[what] || err != nil || (what != "replica unhealthy" && what != "replica ejected" && what != "replica left") {
			continue
		}
		seen[what] = true
		lines = append(lines, fmt.Sprintf("api log: %q %.0f ms after the SIGKILL", what, float64(at.Sub(killed))/float64(time.Millisecond)))
	}
	if len(lines) == 0 {
		return []string{"api log: no line about " + addr + " (LOG_LEVEL must be info or debug)"}
	}
	return lines
}
