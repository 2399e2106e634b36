package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/position"
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
	StepList = "list" // a rate of WritesSettings.Rates, in one of the rounds
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
	// walSenderTimeout is Postgres's default wal_sender_timeout: a runtime
	// paused longer loses its replication connection.
	walSenderTimeout = 60 * time.Second
	// switchAttempts is how often StackRuntimes tries each switch: freezing a
	// busy container's cgroup fails now and then on a loaded host.
	switchAttempts = 5
)

// DefaultWriteRates are the rates of the rounds, orders per second; 100/s is
// the quiet rate, 1,000/s the rate the goals are stated at.
var DefaultWriteRates = []float64{100, 250, 500, 1000, 2000}

// watermarkHops are the write benchmark's hops, in report order.
var watermarkHops = []string{HopWatermarkAccelerated, HopWatermarkMaterialized}

// Runtimes switches the read side off for the command side's steps (and the
// backlog) and on again.
type Runtimes interface {
	Off(ctx context.Context) error
	On(ctx context.Context) error
	How() string // what Off does, for the report
}

// WritesSettings are the knobs of a write benchmark run, which its report
// records. A zero Refine, LoneWindow, Backlog or OverloadFor skips that part;
// other zero values take the Default* values.
type WritesSettings struct {
	BaseURL     string        `json:"base_url"` // the api; required
	Rates       []float64     `json:"rates"`
	Step        time.Duration `json:"step_ns"`
	Rounds      int           `json:"rounds"`
	Refine      int           `json:"refine"`
	Settle      time.Duration `json:"settle_ns"`     // pause before each step, after the runtimes were switched
	MaxInFlight int           `json:"max_in_flight"` // writes outstanding
	// TraceRate is the writes per second traced on each runtime's watermark;
	// TraceConcurrency bounds each hop's traced reads in flight.
	TraceRate        float64 `json:"trace_rate"`
	TraceConcurrency int     `json:"trace_concurrency"`
	CommandSide      string  `json:"command_side"` // how the runtimes were switched off
	// LoneRate and LoneWindow measure F (lone changes); Backlog is the
	// ceiling's backlog; OverloadFor the 2x overload's length.
	LoneRate    float64       `json:"lone_rate"`
	LoneWindow  time.Duration `json:"lone_window_ns"`
	Backlog     int           `json:"backlog"`
	OverloadFor time.Duration `json:"overload_ns"`
	// CatchUpTimeout bounds the wait for both runtimes to cover the last write.
	CatchUpTimeout time.Duration `json:"catch_up_timeout_ns"`
	Timeout        time.Duration `json:"timeout_ns"`
}

// WritesConfig is a write benchmark run.
type WritesConfig struct {
	WritesSettings
	// Accelerated and Materialized are the runtimes' HTTP APIs, for their
	// watermarks; both required.
	Accelerated, Materialized RuntimeEndpoint
	// Stack and Processes say where each process's CPU and memory are read;
	// the load generator is added.
	Stack     *Stack
	Processes []Process
	Runtimes  Runtimes  // required
	DB        *Postgres // writes the ceiling's backlog; no ceiling when nil
	Command   string
	Notes     []string // added to the report's, e.g. what else the machine was doing
}

// WritesRunner runs the write benchmark. Out receives progress.
type WritesRunner struct {
	WritesConfig
	progress

	epoch  time.Time
	off    bool // the runtimes are switched off
	writes *Client
	probes *Client
	meter  *Meter
	rep    *WritesReport
	wm     []Probe // the runtimes' watermark hops
}

// NewWritesRunner returns a runner for cfg with the defaults filled in.
func NewWritesRunner(cfg WritesConfig) *WritesRunner {
	s := &cfg.WritesSettings
	if len(s.Rates) == 0 {
		s.Rates = DefaultWriteRates
	}
	s.Step, s.Rounds, s.Settle = cmp.Or(s.Step, DefaultWriteStep), cmp.Or(s.Rounds, DefaultWriteRounds), cmp.Or(s.Settle, DefaultSettle)
	s.MaxInFlight, s.LoneRate = cmp.Or(s.MaxInFlight, DefaultWritesInFlight), cmp.Or(s.LoneRate, DefaultLoneRate)
	s.TraceRate, s.TraceConcurrency = cmp.Or(s.TraceRate, DefaultTraceRate), cmp.Or(s.TraceConcurrency, DefaultTraceConcurrency)
	s.CatchUpTimeout, s.Timeout = cmp.Or(s.CatchUpTimeout, DefaultCatchUpTimeout), cmp.Or(s.Timeout, DefaultTimeout)
	s.BaseURL = strings.TrimRight(s.BaseURL, "/")
	return &WritesRunner{WritesConfig: cfg, wm: watermarkProbes(cfg.Accelerated, cfg.Materialized)}
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
	r.epoch, r.CommandSide = time.Now(), r.Runtimes.How()
	r.writes = NewClient(r.BaseURL, r.MaxInFlight, r.Timeout)
	r.probes = NewClient("", 2*r.TraceConcurrency+4, r.Timeout)
	r.meter = &Meter{Stack: r.Stack, HTTP: &http.Client{Timeout: 2 * time.Second}, Processes: append(slices.Clone(r.Processes), Process{Name: ProcBench, Self: true})}
	defer r.writes.Close()
	defer r.probes.Close()
	defer r.restore()
	r.rep = &WritesReport{Header: newHeader(ctx, r.Stack, r.Command), Settings: r.WritesSettings}
	r.rep.Notes = r.Notes
	if status, _, msg := r.writes.Do(ctx, http.MethodGet, "/readyz", nil, ""); status/100 != 2 {
		return nil, fmt.Errorf("%w: GET %s/readyz: %s; is the stack up (make up) and --url right?", ErrUnreachable, r.BaseURL, statusText(status, msg))
	}
	before := loadAverage()
	err := r.run(ctx)
	r.rep.Goals, r.rep.Notes = WritesGoals(r.rep), append(r.rep.Notes, loadNote(before)...)
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
	// The ramp narrows each configuration's sustained rate with up to Refine
	// more steps each.
	for range r.Refine {
		stepped := false
		for _, cfg := range []string{ConfigCommand, ConfigChain} {
			if rate := NextRampRate(r.rep.StepsOf(cfg)); rate > 0 {
				if err := r.step(ctx, cfg, rate, StepRamp, 1); err != nil {
					return err
				}
				stepped = true
			}
		}
		if !stepped {
			break
		}
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

// switchRuntimes switches the runtimes on or off.
func (r *WritesRunner) switchRuntimes(ctx context.Context, on bool) error {
	if !on {
		r.off = true
		return r.Runtimes.Off(ctx)
	}
	if err := r.Runtimes.On(ctx); err != nil {
		return err
	}
	r.off = false
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
	if err := r.switchRuntimes(ctx, true); err != nil {
		r.printf("warning: the runtimes could not be switched on again (%v): unpause or start them\n", err)
	}
}

// step runs one configuration at one rate and appends its result.
func (r *WritesRunner) step(ctx context.Context, cfg string, rate float64, phase string, round int) error {
	r.printf("%-12s %6g orders/s for %s (%s, round %d)\n", cfg, rate, r.Step, phase, round)
	chain := cfg == ConfigChain
	if !chain {
		if err := r.switchRuntimes(ctx, false); err != nil {
			return fmt.Errorf("command side at %g/s: %w", rate, err)
		}
	}
	sleepUntil(ctx, time.Now().Add(r.Settle))
	st := WriteStep{Config: cfg, Rate: rate, Phase: phase, Round: round, Duration: r.Step}
	watch := NewWatch(r.probes, r.wm, r.epoch, r.TraceConcurrency, TraceSample(rate, r.TraceRate))
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
		st.CPU, st.Memory = r.perOrder(ctx, c0, st.Writes.OK, to-from), r.meter.Memory(ctx)
		since = time.Now()
		if err := r.switchRuntimes(ctx, true); err != nil {
			return fmt.Errorf("command side at %g/s: %w", rate, err)
		}
	}
	st.CatchUp = r.catchUp(ctx, writer.Last().Token, since)
	if chain {
		// The chain's CPU runs until both runtimes caught up: the work of the
		// step's orders, also what lagged past its end.
		st.CPU, st.Memory = r.perOrder(ctx, c0, st.Writes.OK, time.Since(r.epoch)-from), r.meter.Memory(ctx)
		gctx, cancel := context.WithTimeout(ctx, watermarkGrace)
		traced, answers := watch.Close(gctx)
		cancel()
		st.Traced = len(traced)
		for _, h := range Match(watermarkHops, traced, answers) {
			st.Hops, st.Lags = append(st.Hops, Summarize(h, "")), append(st.Lags, h)
			st.Trends = append(st.Trends, TrendOf(h.Hop, traced, answers, from, to))
		}
	}
	st.Sustained, st.Why = Verdict(st)
	r.rep.Steps = append(r.rep.Steps, st)
	r.printf("%s\n", render("step-line", st))
	return ctx.Err()
}

// perOrder is each process's CPU since before per 2xx write.
func (r *WritesRunner) perOrder(ctx context.Context, before CPUTime, orders int64, wall time.Duration) StepCPU {
	var t CPUTime
	t.Add(before, r.meter.CPU(ctx))
	return StepCPU{Wall: wall, Processes: PerOp(t, orders, Names(r.meter.Processes))}
}

// catchUp waits until each runtime's watermark covers token, and returns the
// time from start to each.
func (r *WritesRunner) catchUp(ctx context.Context, token position.LSN, start time.Time) []CatchUp {
	return catchUp(ctx, r.probes, r.wm, token, start, time.Now().Add(r.CatchUpTimeout))
}

// TraceSample is n of "every n-th write" so that about traceRate writes per
// second are traced at rate.
func TraceSample(rate, traceRate float64) int {
	if traceRate <= 0 || rate <= traceRate {
		return 1
	}
	return int(math.Ceil(rate / traceRate))
}

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

// Off pauses or stops the runtimes; the caller switches them on again when
// it fails.
func (s *StackRuntimes) Off(ctx context.Context) error {
	do := s.Stack.Pause
	if s.Stop {
		do = s.Stack.Stop
	}
	for _, svc := range slices.Backward(s.Services) {
		if err := s.retry(ctx, func() error { return do(ctx, svc) }); err != nil {
			return err
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
		errs = append(errs, s.retry(ctx, func() error { return do(ctx, svc) }))
	}
	return errors.Join(errs...)
}

func (s *StackRuntimes) retry(ctx context.Context, do func() error) error {
	err := do()
	for attempt := 1; attempt < switchAttempts && err != nil && sleepUntil(ctx, time.Now().Add(time.Second)); attempt++ {
		err = do()
	}
	return err
}
