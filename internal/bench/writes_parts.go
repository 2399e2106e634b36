package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// walSenderTimeout is Postgres's default wal_sender_timeout: a runtime paused
// longer loses its replication connection and reconnects on unpause.
const walSenderTimeout = 60 * time.Second

// lone measures F, the CPU of applying a lone change: lone orders at LoneRate
// for LoneWindow, each applied long before the next arrives, between two
// quiet windows as long (no writes). F is the window's CPU less the quiet
// windows' rate over it, per order.
func (r *WritesRunner) lone(ctx context.Context) *LoneCost {
	r.printf("lone changes: %s quiet, %s of %g orders/s, %s quiet\n", r.LoneWindow, r.LoneWindow, r.LoneRate, r.LoneWindow)
	var idle CPUUsage
	var idleFor time.Duration
	quiet := func() {
		c0, t0 := r.meter.CPU(ctx), time.Now()
		sleepUntil(ctx, t0.Add(r.LoneWindow))
		idle.Add(c0, r.meter.CPU(ctx))
		idleFor += time.Since(t0)
	}
	quiet()
	writer := NewWriter(r.writes, r.LoneRate, r.epoch)
	writer.For = r.LoneWindow
	c0, t0 := r.meter.CPU(ctx), time.Now()
	writer.Open()
	writer.Wait(ctx)
	writer.Close()
	// The last change's work counts: wait until both runtimes applied it.
	r.catchUp(ctx, watermarkProbes(r.Accelerated, r.Materialized), lastWrite(writer.Writes()), time.Now())
	var busy CPUUsage
	busy.Add(c0, r.meter.CPU(ctx))
	wall := time.Since(t0)
	quiet()
	names := Names(r.meter.Processes)
	n := writer.Summary().OK
	l := &LoneCost{Window: wall, Orders: n, CPU: PerOp(busy, n, names)}
	SubtractBackground(l.CPU, BackgroundOf(PerOp(idle, 0, names), idleFor), wall, n)
	r.printf("  F (net us per lone change):")
	for _, c := range l.CPU {
		r.printf(" %s %s;", c.Process, cpuText(&c))
	}
	r.printf("\n")
	return l
}

// ceiling measures the single-feed ceiling: with the runtimes off, Backlog
// orders are written as as many one-row transactions, then one more through
// the api, whose token marks the backlog's end; then the runtimes are
// switched on and each one's catch-up to that token is timed.
func (r *WritesRunner) ceiling(ctx context.Context) (*Ceiling, error) {
	r.printf("single-feed ceiling: a backlog of %d one-row transactions while the runtimes are off\n", r.Backlog)
	c := &Ceiling{Backlog: r.Backlog}
	if err := r.switchOff(ctx); err != nil {
		return c, fmt.Errorf("ceiling: %w", err)
	}
	start := time.Now()
	err := r.DB.Backlog(ctx, r.Backlog)
	c.Wrote = time.Since(start)
	status, hdr, msg := r.writes.Do(ctx, http.MethodPost, PathOrders, nil, nil)
	token := positionOf(status, hdr)
	since := time.Now()
	if err2 := r.switchOn(ctx); err2 != nil || err != nil {
		return c, fmt.Errorf("ceiling: %w", errors.Join(err, err2))
	}
	if token.IsZero() {
		c.Why = "POST /orders after the backlog gave no token: " + statusText(status, msg)
		return c, nil
	}
	c.CatchUp = r.catchUp(ctx, watermarkProbes(r.Accelerated, r.Materialized), Write{Token: token}, since)
	if time.Since(start)-time.Since(since) > walSenderTimeout {
		c.Why = fmt.Sprintf("the runtimes were off for more than Postgres's wal_sender_timeout (%s): runtime 1 reconnected before it could catch up; lower --backlog", walSenderTimeout)
	}
	r.printf("  %s\n", ceilingText(c))
	return c, nil
}

// overload writes the whole chain at twice its sustained rate for
// OverloadFor and samples the runtimes' resident memory every second.
func (r *WritesRunner) overload(ctx context.Context) *Overload {
	base, _ := SustainedRange(r.rep.StepsOf(ConfigChain))
	o := &Overload{Base: base, Rate: 2 * base, For: r.OverloadFor}
	if base == 0 {
		o.Base, o.Rate = r.Rates[0], 2*r.Rates[0]
		o.Why = fmt.Sprintf("the whole chain sustained no rate: twice the lowest rate, %g/s", r.Rates[0])
	}
	r.printf("overload: %g orders/s (2x the whole chain's %g/s) for %s\n", o.Rate, o.Base, o.For)
	writer := NewWriter(r.writes, o.Rate, r.epoch)
	writer.MaxInFlight, writer.For = r.MaxInFlight, r.OverloadFor
	start := time.Now()
	writer.Open()
	tick := time.NewTicker(time.Second)
	for done := false; !done; {
		select {
		case <-writer.done:
			done = true
		case <-ctx.Done():
			done = true
		case <-tick.C:
			for _, m := range r.meter.Memory(ctx) {
				if isRuntime(m.Process) && m.Bytes > 0 {
					o.Samples = append(o.Samples, RSSSample{At: time.Since(start), Process: m.Process, Bytes: m.Bytes})
				}
			}
		}
	}
	tick.Stop()
	writer.Close()
	o.Writes = writer.Summary()
	o.CatchUp = r.catchUp(ctx, watermarkProbes(r.Accelerated, r.Materialized), lastWrite(writer.Writes()), time.Now())
	o.Runtimes = RSSOf(o.Samples, r.OverloadFor)
	return o
}

func isRuntime(process string) bool { return process == ProcAccelerated || process == ProcMaterialized }

// RSSOf summarizes each runtime's samples of an overload of length d: bounded
// when the peak of its second half is at most 10% (and at least 16 MiB) above
// the peak of its first half. Memory that grows with the backlog grows
// through both halves; a bounded runtime levels off once its buffers are full.
func RSSOf(samples []RSSSample, d time.Duration) []RuntimeRSS {
	var out []RuntimeRSS
	for _, p := range []string{ProcAccelerated, ProcMaterialized} {
		m := RuntimeRSS{Process: p}
		for _, s := range samples {
			if s.Process != p {
				continue
			}
			if m.Samples++; m.Start == 0 {
				m.Start = s.Bytes
			}
			if s.At < d/2 {
				m.FirstHalf = max(m.FirstHalf, s.Bytes)
			} else {
				m.SecondHalf = max(m.SecondHalf, s.Bytes)
			}
			m.End = s.Bytes
		}
		m.Bounded = m.FirstHalf > 0 && m.SecondHalf > 0 && m.SecondHalf <= max(m.FirstHalf*11/10, m.FirstHalf+16<<20)
		out = append(out, m)
	}
	return out
}

// switchAttempts is how often StackRuntimes tries each switch: freezing a
// busy container's cgroup fails now and then on a loaded host.
const switchAttempts = 5

var _ Runtimes = (*StackRuntimes)(nil)

// StackRuntimes switches the runtimes' containers off and on: Off handles
// the services in reverse order (runtime 2 before the runtime it reads), On
// in order.
type StackRuntimes struct {
	Stack    *Stack
	Services []string // "accelerated", "materialized"
	// Stop stops the containers instead of pausing them. A runtime in memory
	// mode drops its slot on a clean shutdown, so its start takes a new
	// snapshot: the catch-up is a restart's, not a backlog's.
	Stop bool
}

// How says what Off does, for the report.
func (s *StackRuntimes) How() string {
	if s.Stop {
		return "runtimes stopped (" + strings.Join(s.Services, ", ") + "), started again after the step: a restart takes a new snapshot"
	}
	return "runtimes paused (" + strings.Join(s.Services, ", ") + "), unpaused after the step: runtime 1's slot keeps the backlog in Postgres"
}

// Off pauses or stops the runtimes.
func (s *StackRuntimes) Off(ctx context.Context) error {
	do := s.Stack.Pause
	if s.Stop {
		do = s.Stack.Stop
	}
	svcs := slices.Clone(s.Services)
	slices.Reverse(svcs)
	for _, svc := range svcs {
		if err := retry(ctx, func() error { return do(ctx, svc) }); err != nil {
			return err // the caller switches them on again
		}
	}
	return nil
}

// On unpauses or starts the runtimes; switching on one that is not off is no
// error, so On also mends a half-done Off.
func (s *StackRuntimes) On(ctx context.Context) error {
	do := s.Stack.Unpause
	if s.Stop {
		do = s.Stack.Start
	}
	var errs []error
	for _, svc := range s.Services {
		errs = append(errs, retry(ctx, func() error { return do(ctx, svc) }))
	}
	return errors.Join(errs...)
}

func retry(ctx context.Context, do func() error) error {
	err := do()
	for attempt := 1; attempt < switchAttempts && err != nil && sleepUntil(ctx, time.Now().Add(time.Second)); attempt++ {
		err = do()
	}
	return err
}
