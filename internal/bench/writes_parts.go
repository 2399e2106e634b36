package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// lone measures F, the CPU of applying a lone change: lone orders at LoneRate
// for LoneWindow, each applied long before the next arrives, between two
// quiet windows as long (no writes). F is the window's CPU less the quiet
// windows' rate over it, per order.
func (r *WritesRunner) lone(ctx context.Context) *LoneCost {
	r.printf("lone changes: %s quiet, %s of %g orders/s, %s quiet\n", r.LoneWindow, r.LoneWindow, r.LoneRate, r.LoneWindow)
	var idle, busy CPUTime
	var idleFor time.Duration
	quiet := func() { idleFor += r.meter.Span(ctx, &idle, func() { sleepUntil(ctx, time.Now().Add(r.LoneWindow)) }) }
	quiet()
	writer := NewWriter(r.writes, r.LoneRate, r.epoch)
	writer.For = r.LoneWindow
	wall := r.meter.Span(ctx, &busy, func() {
		writer.Open()
		writer.Wait(ctx)
		writer.Close()
		// The last change's work counts: wait until both runtimes applied it.
		r.catchUp(ctx, writer.Last().Token, time.Now())
	})
	quiet()
	names, n := Names(r.meter.Processes), writer.Summary().OK
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
	if err := r.switchRuntimes(ctx, false); err != nil {
		return c, fmt.Errorf("ceiling: %w", err)
	}
	start := time.Now()
	err := r.DB.Backlog(ctx, r.Backlog)
	c.Wrote = time.Since(start)
	status, hdr, msg := r.writes.Do(ctx, http.MethodPost, PathOrders, nil, "")
	token, since := positionOf(status, hdr), time.Now()
	if err2 := r.switchRuntimes(ctx, true); err2 != nil || err != nil {
		return c, fmt.Errorf("ceiling: %w", errors.Join(err, err2))
	}
	if token.IsZero() {
		c.Why = "POST /orders after the backlog gave no token: " + statusText(status, msg)
		return c, nil
	}
	c.CatchUp = r.catchUp(ctx, token, since)
	if since.Sub(start) > walSenderTimeout {
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
	defer tick.Stop()
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
	writer.Close()
	o.Writes, o.Runtimes = writer.Summary(), RSSOf(o.Samples, r.OverloadFor)
	o.CatchUp = r.catchUp(ctx, writer.Last().Token, time.Now())
	return o
}
