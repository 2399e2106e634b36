package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Configurations of the write benchmark.
const (
	// ConfigCommand is the command side alone: the api and Postgres, the
	// runtimes switched off (Runtimes.Off) for the step.
	ConfigCommand = "command side"
	// ConfigChain is the whole chain: api, Postgres and both runtimes following.
	ConfigChain = "whole chain"
)

// Phases of the write benchmark's steps.
const (
	StepList = "list" // a rate of WritesConfig.Rates, in one of the rounds
	StepRamp = "ramp" // a rate the ramp chose to narrow the sustained rate
)

// Defaults of the write benchmark.
const (
	DefaultWriteStep   = 30 * time.Second
	DefaultWriteRounds = 2
	// DefaultRefine is the ramp's steps per configuration after the rounds.
	DefaultRefine = 3
	// DefaultTraceRate is writes per second traced on each runtime's
	// watermark: each costs the runtime one trivial query.
	DefaultTraceRate        = 50.0
	DefaultTraceConcurrency = 512
	DefaultWritesInFlight   = 1000
	DefaultSettle           = 3 * time.Second
	DefaultCatchUpTimeout   = 5 * time.Minute
	// DefaultLoneRate and DefaultLoneWindow measure F, the CPU of applying a
	// lone change: 4 orders a second, each applied long before the next.
	DefaultLoneRate   = 4.0
	DefaultLoneWindow = 20 * time.Second
	// DefaultBacklog is the single-feed ceiling's backlog of one-row
	// transactions, written while the runtimes are paused.
	DefaultBacklog = 100_000
	// DefaultOverloadFor is how long the whole chain is written at twice its
	// sustained rate while the runtimes' RSS is sampled.
	DefaultOverloadFor = 60 * time.Second
)

// DefaultWriteRates are the rates of the rounds, orders per second; 100/s is
// the quiet rate, 1,000/s the rate the goals are stated at.
var DefaultWriteRates = []float64{100, 250, 500, 1000, 2000}

// Runtimes switches the read side off for the command side's steps (and the
// backlog) and on again.
type Runtimes interface {
	Off(ctx context.Context) error
	On(ctx context.Context) error
	How() string // what Off does, for the report
}

// WritesConfig is a write benchmark run. Zero values take the Default*
// values; a negative Refine, LoneWindow, Backlog or OverloadFor skips that part.
type WritesConfig struct {
	BaseURL string // the api; required
	Rates   []float64
	Step    time.Duration
	Rounds  int
	Refine  int
	Settle  time.Duration // pause before each step, after the runtimes were switched
	// MaxInFlight bounds the writes outstanding.
	MaxInFlight int
	// TraceRate is the writes per second traced on each runtime's watermark;
	// TraceConcurrency bounds each hop's traced reads in flight.
	TraceRate        float64
	TraceConcurrency int
	// Accelerated and Materialized are the runtimes' HTTP APIs, for their
	// watermarks; both required.
	Accelerated, Materialized RuntimeEndpoint
	// Stack and Processes say where each process's CPU and memory are read;
	// the load generator is added.
	Stack     *Stack
	Processes []Process
	Runtimes  Runtimes // required
	// LoneRate and LoneWindow measure F (lone changes); Backlog is the
	// ceiling's backlog, written through DB (none when nil); OverloadFor the
	// 2x overload's length.
	LoneRate    float64
	LoneWindow  time.Duration
	Backlog     int
	DB          *Postgres
	OverloadFor time.Duration
	// CatchUpTimeout bounds the wait for both runtimes to cover the last write.
	CatchUpTimeout time.Duration
	Timeout        time.Duration
	Command        string
	Notes          []string // added to the report's, e.g. what else the machine was doing
}

// WritesRunner runs the write benchmark. Out receives progress.
type WritesRunner struct {
	WritesConfig
	Out io.Writer

	epoch  time.Time
	off    bool // the runtimes are switched off
	writes *Client
	probes *Client
	meter  *Meter
	rep    *WritesReport
}

// NewWritesRunner returns a runner for cfg with the defaults filled in.
func NewWritesRunner(cfg WritesConfig) *WritesRunner {
	if len(cfg.Rates) == 0 {
		cfg.Rates = DefaultWriteRates
	}
	cfg.Step = cmp.Or(cfg.Step, DefaultWriteStep)
	cfg.Rounds = cmp.Or(cfg.Rounds, DefaultWriteRounds)
	cfg.Refine = cmp.Or(cfg.Refine, DefaultRefine)
	cfg.Settle = cmp.Or(cfg.Settle, DefaultSettle)
	cfg.MaxInFlight = cmp.Or(cfg.MaxInFlight, DefaultWritesInFlight)
	cfg.TraceRate = cmp.Or(cfg.TraceRate, DefaultTraceRate)
	cfg.TraceConcurrency = cmp.Or(cfg.TraceConcurrency, DefaultTraceConcurrency)
	cfg.LoneRate = cmp.Or(cfg.LoneRate, DefaultLoneRate)
	cfg.LoneWindow = cmp.Or(cfg.LoneWindow, DefaultLoneWindow)
	cfg.Backlog = cmp.Or(cfg.Backlog, DefaultBacklog)
	cfg.OverloadFor = cmp.Or(cfg.OverloadFor, DefaultOverloadFor)
	cfg.CatchUpTimeout = cmp.Or(cfg.CatchUpTimeout, DefaultCatchUpTimeout)
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &WritesRunner{WritesConfig: cfg}
}

func (r *WritesRunner) printf(format string, args ...any) {
	if r.Out != nil {
		fmt.Fprintf(r.Out, format, args...)
	}
}

// Run measures F, then the rates in interleaved rounds, then the ramp, the
// single-feed ceiling and the 2x overload. It fails when the api does not
// answer, a runtime cannot be switched, or ctx ends; never because a goal was
// missed. The report holds what was measured until then.
func (r *WritesRunner) Run(ctx context.Context) (*WritesReport, error) {
	switch {
	case r.BaseURL == "":
		return nil, errors.New("run write benchmark: no base URL of the api")
	case r.Accelerated.URL == "" || r.Materialized.URL == "":
		return nil, errors.New("run write benchmark: both runtimes' HTTP APIs are needed for their watermarks")
	case r.Runtimes == nil:
		return nil, errors.New("run write benchmark: nothing to switch the runtimes off with")
	}
	r.epoch = time.Now()
	r.writes = NewClient(r.BaseURL, r.MaxInFlight, r.Timeout)
	r.probes = NewClient("", 2*r.TraceConcurrency+4, r.Timeout)
	r.meter = &Meter{Stack: r.Stack, HTTP: &http.Client{Timeout: 2 * time.Second}, Processes: append(slices.Clone(r.Processes), Process{Name: ProcBench, Self: true})}
	defer r.writes.Close()
	defer r.probes.Close()
	defer r.restore()
	r.rep = &WritesReport{Started: time.Now(), Command: r.Command, Settings: r.settings(), Machine: DescribeMachine(ctx, r.Stack), Notes: r.Notes}
	if status, _, msg := r.writes.Do(ctx, http.MethodGet, "/readyz", nil, nil); status/100 != 2 {
		return nil, fmt.Errorf("%w: GET %s/readyz: %s; is the stack up (make up) and --url right?", ErrUnreachable, r.BaseURL, statusText(status, msg))
	}
	before := loadAverage()
	err := r.run(ctx)
	r.rep.Goals = WritesGoals(r.rep)
	if la := loadAverage(); before != "" {
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("host load average (1, 5, 15 min) when the run began: %s; at its end: %s (other work on the host inflates latencies and CPU per order)", before, la))
	}
	return r.rep, err
}

func (r *WritesRunner) run(ctx context.Context) error {
	if r.LoneWindow > 0 {
		r.rep.Lone = r.lone(ctx)
	}
	for round := range r.Rounds {
		// Each round runs the configurations in the other order, so that
		// neither always runs on a machine the other has just warmed.
		cfgs := []string{ConfigCommand, ConfigChain}
		if round%2 == 1 {
			slices.Reverse(cfgs)
		}
		for _, rate := range r.Rates {
			for _, cfg := range cfgs {
				if err := r.step(ctx, cfg, rate, StepList, round+1); err != nil {
					return err
				}
			}
		}
	}
	if err := r.ramp(ctx); err != nil {
		return err
	}
	if r.Backlog > 0 && r.DB != nil {
		c, err := r.ceiling(ctx)
		if r.rep.Ceiling = c; err != nil {
			return err
		}
	}
	if r.OverloadFor > 0 {
		r.rep.Overload = r.overload(ctx)
	}
	return ctx.Err()
}

// ramp narrows each configuration's sustained rate with up to Refine more
// steps each.
func (r *WritesRunner) ramp(ctx context.Context) error {
	for range max(r.Refine, 0) {
		next := map[string]float64{}
		for _, cfg := range []string{ConfigCommand, ConfigChain} {
			if rate := NextRampRate(r.rep.StepsOf(cfg)); rate > 0 {
				next[cfg] = rate
			}
		}
		if len(next) == 0 {
			return nil
		}
		for _, cfg := range []string{ConfigCommand, ConfigChain} {
			if rate := next[cfg]; rate > 0 {
				if err := r.step(ctx, cfg, rate, StepRamp, 1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// restore switches the runtimes on again when a run ended while they were
// off (interrupted, or a step failed): a stack is never left paused.
func (r *WritesRunner) restore() {
	if !r.off {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.Runtimes.On(ctx); err != nil {
		r.printf("warning: the runtimes could not be switched on again (%v): unpause or start them\n", err)
		return
	}
	r.off = false
}

func (r *WritesRunner) switchOff(ctx context.Context) error {
	r.off = true
	return r.Runtimes.Off(ctx)
}

func (r *WritesRunner) switchOn(ctx context.Context) error {
	if err := r.Runtimes.On(ctx); err != nil {
		return err
	}
	r.off = false
	return nil
}

func (r *WritesRunner) settings() WritesSettings {
	return WritesSettings{
		BaseURL: r.BaseURL, Rates: r.Rates, Step: r.Step, Rounds: r.Rounds, Refine: r.Refine, Settle: r.Settle,
		MaxInFlight: r.MaxInFlight, TraceRate: r.TraceRate, TraceConcurrency: r.TraceConcurrency,
		CommandSide: r.Runtimes.How(), LoneRate: r.LoneRate, LoneWindow: max(r.LoneWindow, 0),
		Backlog: max(r.Backlog, 0), OverloadFor: max(r.OverloadFor, 0),
	}
}

// step runs one configuration at one rate and appends its result.
func (r *WritesRunner) step(ctx context.Context, cfg string, rate float64, phase string, round int) error {
	r.printf("%-12s %6g orders/s for %s (%s, round %d)\n", cfg, rate, r.Step, phase, round)
	chain := cfg == ConfigChain
	if !chain {
		if err := r.switchOff(ctx); err != nil {
			return fmt.Errorf("command side at %g/s: %w", rate, err)
		}
	}
	sleepUntil(ctx, time.Now().Add(r.Settle))
	st := WriteStep{Config: cfg, Rate: rate, Phase: phase, Round: round, Duration: r.Step}
	probes := watermarkProbes(r.Accelerated, r.Materialized)
	watch := NewWatch(r.probes, probes, r.epoch)
	watch.Concurrency, watch.Sample = r.TraceConcurrency, TraceSample(rate, r.TraceRate)
	writer := NewWriter(r.writes, rate, r.epoch)
	writer.MaxInFlight, writer.For = r.MaxInFlight, r.Step
	if chain {
		writer.OnWrite = watch.Read
		watch.Open()
	}
	c0, from := r.meter.CPU(ctx), time.Since(r.epoch)
	writer.Open()
	writer.Wait(ctx)
	writer.Close()
	to := time.Since(r.epoch)
	if err := ctx.Err(); err != nil {
		watch.Close(ctx)
		return err
	}
	st.Writes, st.Failures = writer.Summary(), writer.Failures()
	since := time.Now()
	if !chain {
		// The command side's CPU is the step's: the runtimes are off.
		st.CPU = r.perOrder(c0, r.meter.CPU(ctx), st.Writes.OK, to-from)
		st.Memory = r.meter.Memory(ctx)
		since = time.Now()
		if err := r.switchOn(ctx); err != nil {
			return fmt.Errorf("command side at %g/s: %w", rate, err)
		}
	}
	st.CatchUp = r.catchUp(ctx, probes, lastWrite(writer.Writes()), since)
	if chain {
		// The chain's CPU runs until both runtimes caught up: the work of the
		// step's orders, also what lagged past its end.
		st.CPU = r.perOrder(c0, r.meter.CPU(ctx), st.Writes.OK, time.Since(r.epoch)-from)
		st.Memory = r.meter.Memory(ctx)
		r.trace(ctx, &st, watch, from, to)
	}
	st.Sustained, st.Why = Verdict(st)
	r.rep.Steps = append(r.rep.Steps, st)
	r.printf("%s\n", StepLine(st))
	return ctx.Err()
}

// trace closes the watch and keeps each runtime's lags and trend of the step.
func (r *WritesRunner) trace(ctx context.Context, st *WriteStep, watch *Watch, from, to time.Duration) {
	gctx, cancel := context.WithTimeout(ctx, watermarkGrace)
	watch.Close(gctx)
	cancel()
	traced, answers := watch.Traced(), watch.Answers()
	st.Traced = len(traced)
	for _, h := range Match(watermarkHops, traced, answers) {
		st.Hops = append(st.Hops, Summarize(h, ""))
		st.Lags = append(st.Lags, h)
	}
	for _, hop := range watermarkHops {
		st.Trends = append(st.Trends, TrendOf(hop, traced, answers, from, to))
	}
}

// watermarkHops are the write benchmark's hops, in report order.
var watermarkHops = []string{HopWatermarkAccelerated, HopWatermarkMaterialized}

// perOrder is each process's CPU between two readings per 2xx write.
func (r *WritesRunner) perOrder(before, after CPUReading, orders int64, wall time.Duration) StepCPU {
	var u CPUUsage
	u.Add(before, after)
	return StepCPU{Wall: wall, Processes: PerOp(u, orders, Names(r.meter.Processes))}
}

func lastWrite(writes []Write) Write {
	var last Write
	for _, w := range writes {
		if w.Token > last.Token {
			last = w
		}
	}
	return last
}

// catchUp waits, hop after hop, until each runtime's watermark covers last's
// token, and returns the time from start to each.
func (r *WritesRunner) catchUp(ctx context.Context, probes []Probe, last Write, start time.Time) []CatchUp {
	if last.Token.IsZero() {
		return nil
	}
	deadline := time.Now().Add(r.CatchUpTimeout)
	var out []CatchUp
	for _, p := range probes {
		c := CatchUp{Hop: p.Hop}
		for {
			status, pos, why := askAt(ctx, r.probes, p, last.Token)
			if status/100 == 2 && pos >= last.Token {
				c.Time, c.OK = time.Since(start), true
				break
			}
			c.Why = cmp.Or(why, fmt.Sprintf("status %d", status))
			if ctx.Err() != nil || !time.Now().Before(deadline) {
				c.Time = time.Since(start)
				break
			}
			if status == ErrorStatus { // not listening yet: no wait in the answer
				sleepUntil(ctx, time.Now().Add(100*time.Millisecond))
			}
		}
		out = append(out, c)
	}
	return out
}

// TraceSample is n of "every n-th write" so that about traceRate writes per
// second are traced at rate.
func TraceSample(rate, traceRate float64) int {
	if traceRate <= 0 || rate <= traceRate {
		return 1
	}
	return int(math.Ceil(rate / traceRate))
}
