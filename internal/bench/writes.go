package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
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
	StepList = "list" // a rate of WritesConfig.Rates
	StepRamp = "ramp" // a rate the ramp chose to narrow the sustained rate
	StepGoal = "goal" // the chain at the goals' rate, when no step had it
)

// Defaults of the write benchmark.
const (
	DefaultWriteStep = 30 * time.Second
	// DefaultRefine is the ramp's steps per configuration after the list.
	DefaultRefine = 3
	// DefaultTraceRate is writes per second traced on each runtime's watermark:
	// each costs the runtime one trivial query, so tracing every write at
	// 2,000/s would be a read load of its own.
	DefaultTraceRate        = 50.0
	DefaultTraceConcurrency = 512
	DefaultWritesInFlight   = 1000
	DefaultSettle           = 3 * time.Second
	DefaultCatchUpTimeout   = 5 * time.Minute
	// GoalRate is the rate the goals are stated at, when the command
	// side sustains it.
	GoalRate = 1000.0
)

// DefaultWriteRates are the rates of the list, orders per second.
var DefaultWriteRates = []float64{100, 250, 500, 1000, 2000}

// Runtimes switches the read side off for the command side's steps and on again.
type Runtimes interface {
	Off(ctx context.Context) error
	On(ctx context.Context) error
	// How says what Off does, for the report.
	How() string
}

// WritesConfig is a write benchmark run. Zero values take the Default* values.
type WritesConfig struct {
	BaseURL string // the api; required
	Rates   []float64
	Step    time.Duration
	// Refine is the ramp's steps per configuration after the list; none when
	// negative.
	Refine int
	// Settle is the pause before each step, after the runtimes were switched.
	Settle time.Duration
	// MaxInFlight bounds the writes outstanding.
	MaxInFlight int
	// TraceRate is the writes per second traced on each runtime's watermark;
	// TraceConcurrency bounds each hop's traced reads in flight.
	TraceRate        float64
	TraceConcurrency int
	// Accelerated and Materialized are the runtimes' HTTP APIs, for their
	// watermarks; both required.
	Accelerated, Materialized RuntimeEndpoint
	// CPU and Memory say where each process is read; ProcBench is added.
	CPU    []CPUSource
	Memory []MemorySource
	Docker string
	// Project is the Compose project, to find containers.
	Project string
	// Runtimes switches the read side; required.
	Runtimes Runtimes
	// CatchUpTimeout bounds the wait for both runtimes to cover the last write.
	CatchUpTimeout time.Duration
	Timeout        time.Duration
	Command        string
	// Notes are added to the report's, e.g. what else the machine was doing.
	Notes []string
}

// WritesRunner runs the write benchmark. Out receives progress.
type WritesRunner struct {
	WritesConfig
	Out io.Writer

	epoch  time.Time
	off    bool // the runtimes are switched off
	writes *Client
	probes *Client
	polls  *http.Client
}

// NewWritesRunner returns a runner for cfg with the defaults filled in.
func NewWritesRunner(cfg WritesConfig) *WritesRunner {
	if len(cfg.Rates) == 0 {
		cfg.Rates = DefaultWriteRates
	}
	setDefault(&cfg.Step, DefaultWriteStep)
	setDefault(&cfg.Refine, DefaultRefine)
	setDefault(&cfg.Settle, DefaultSettle)
	setDefault(&cfg.MaxInFlight, DefaultWritesInFlight)
	setDefault(&cfg.TraceConcurrency, DefaultTraceConcurrency)
	setDefault(&cfg.CatchUpTimeout, DefaultCatchUpTimeout)
	setDefault(&cfg.Timeout, DefaultTimeout)
	if cfg.TraceRate <= 0 {
		cfg.TraceRate = DefaultTraceRate
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &WritesRunner{WritesConfig: cfg}
}

func (r *WritesRunner) printf(format string, args ...any) {
	if r.Out != nil {
		fmt.Fprintf(r.Out, format, args...)
	}
}

// Run runs the list of rates for both configurations, interleaved per rate,
// then the ramp, then the goals' step if needed. It fails when the api does not
// answer, a runtime cannot be switched, or ctx ends; never because a rate was
// not sustained.
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
	r.polls = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer r.writes.Close()
	defer r.probes.Close()
	defer r.polls.CloseIdleConnections()
	defer r.restore()
	rep := &WritesReport{Started: time.Now(), Command: r.Command, Settings: r.settings(), Machine: DescribeMachine(ctx, r.Docker), Notes: r.Notes}
	if s, _ := r.writes.Do(ctx, http.MethodGet, "/readyz", nil, nil); s.Status/100 != 2 {
		return nil, fmt.Errorf("%w: GET %s/readyz: %s; is the stack up (make up) and --url right?", ErrUnreachable, r.BaseURL, statusOf(s))
	}
	before := loadAverage()
	for _, rate := range r.Rates {
		for _, cfg := range []string{ConfigCommand, ConfigChain} {
			if err := r.step(ctx, rep, cfg, rate, StepList); err != nil {
				return rep, err
			}
		}
	}
	for range max(r.Refine, 0) {
		next := map[string]float64{}
		for _, cfg := range []string{ConfigCommand, ConfigChain} {
			if rate := NextRampRate(rep.StepsOf(cfg)); rate > 0 {
				next[cfg] = rate
			}
		}
		if len(next) == 0 {
			break
		}
		for _, cfg := range []string{ConfigCommand, ConfigChain} {
			if rate := next[cfg]; rate > 0 {
				if err := r.step(ctx, rep, cfg, rate, StepRamp); err != nil {
					return rep, err
				}
			}
		}
	}
	if rate, _ := GoalRateOf(rep.StepsOf(ConfigCommand)); rate > 0 && findStep(rep.StepsOf(ConfigChain), rate) == nil {
		if err := r.step(ctx, rep, ConfigChain, rate, StepGoal); err != nil {
			return rep, err
		}
	}
	if before != "" {
		rep.Notes = append(rep.Notes, fmt.Sprintf("host load average (1, 5, 15 min) when the run began: %s; at its end: %s (other work on the host inflates latencies and CPU per order)", before, loadAverage()))
	}
	return rep, nil
}

// restore switches the runtimes on again when a run ended while they were off
// (interrupted, or a step failed): a stack is never left paused.
func (r *WritesRunner) restore() {
	if !r.off {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.Runtimes.On(ctx); err != nil {
		r.printf("warning: the runtimes could not be switched on again (%v): docker unpause or start them\n", err)
		return
	}
	r.off = false
}

func (r *WritesRunner) settings() WritesSettings {
	return WritesSettings{
		BaseURL: r.BaseURL, Rates: r.Rates, Step: r.Step, Refine: r.Refine, Settle: r.Settle,
		MaxInFlight: r.MaxInFlight, TraceRate: r.TraceRate, TraceConcurrency: r.TraceConcurrency,
		CommandSide: r.Runtimes.How(),
	}
}

// step runs one configuration at one rate and appends its result.
func (r *WritesRunner) step(ctx context.Context, rep *WritesReport, cfg string, rate float64, phase string) error {
	r.printf("%-12s %6g orders/s for %s (%s)\n", cfg, rate, r.Step, phase)
	chain := cfg == ConfigChain
	if !chain {
		r.off = true
		if err := r.Runtimes.Off(ctx); err != nil {
			return fmt.Errorf("command side at %g/s: %w", rate, err)
		}
	}
	sleepUntil(ctx, time.Now().Add(r.Settle))
	st := WriteStep{Config: cfg, Rate: rate, Phase: phase, Duration: r.Step}
	cpu := r.sampler(chain)
	probes := watermarkProbes(r.Accelerated, r.Materialized)
	watch := NewWatch(r.probes, probes, r.epoch)
	watch.Concurrency, watch.Sample = r.TraceConcurrency, TraceSample(rate, r.TraceRate)
	writer := NewWriter(r.writes, rate, r.epoch)
	writer.MaxInFlight, writer.For = r.MaxInFlight, r.Step
	if chain {
		writer.OnWrite = watch.Read
		watch.Open()
	}
	c0, from := cpu.Read(ctx), time.Since(r.epoch)
	writer.Open()
	writer.Wait(ctx)
	writer.Close()
	to := time.Since(r.epoch)
	if err := ctx.Err(); err != nil {
		watch.Close(ctx)
		return err
	}
	st.Writes, st.Failures = writer.Summary(), writer.Failures()
	writes := writer.Writes()
	// Both runtimes cover the last write: from the end of the writes (chain),
	// or from when they began to be switched on again (command side).
	since := time.Now()
	if !chain {
		// The CPU of the command side is the step's; the runtimes are off.
		st.CPU = r.perOrder(cpu, c0, cpu.Read(ctx), st.Writes.OK, to-from)
		st.Memory = r.memory(ctx, false)
		since = time.Now()
		if err := r.Runtimes.On(ctx); err != nil {
			return fmt.Errorf("command side at %g/s: %w", rate, err)
		}
		r.off = false
	}
	st.CatchUp = r.catchUp(ctx, probes, writes, since)
	if chain {
		// The chain's CPU runs until both runtimes caught up: the work of the
		// step's orders, also what lagged past its end.
		st.CPU = r.perOrder(cpu, c0, cpu.Read(ctx), st.Writes.OK, time.Since(r.epoch)-from)
		st.Memory = r.memory(ctx, true)
		gctx, cancel := context.WithTimeout(ctx, watermarkGrace)
		watch.Close(gctx)
		cancel()
		st.Traced = len(watch.Traced())
		hops := []string{HopWatermarkAccelerated, HopWatermarkMaterialized}
		for _, h := range Match(hops, watch.Traced(), watch.Answers()) {
			st.Hops = append(st.Hops, Summarize(h, ""))
		}
		for _, hop := range hops {
			st.Trends = append(st.Trends, TrendOf(hop, watch.Traced(), watch.Answers(), from, to))
		}
	} else {
		st.Memory = append(st.Memory, r.memoryOfRuntimes(ctx)...)
	}
	st.Sustained, st.Why = Verdict(st)
	rep.Steps = append(rep.Steps, st)
	r.printf("%s\n", StepLine(st))
	return ctx.Err()
}

// sampler reads the processes of a configuration: with the runtimes off, only
// the api, Postgres and the load generator.
func (r *WritesRunner) sampler(chain bool) *CPUSampler {
	srcs := []CPUSource{}
	for _, s := range r.CPU {
		if chain || (s.Process != ProcAccelerated && s.Process != ProcMaterialized) {
			srcs = append(srcs, s)
		}
	}
	srcs = append(srcs, CPUSource{Process: ProcBench, Self: true})
	return &CPUSampler{Sources: srcs, HTTP: r.polls, Docker: r.Docker, Project: r.Project}
}

// perOrder is each process's CPU between two readings per 2xx write; the wall
// time is kept for the report.
func (r *WritesRunner) perOrder(cpu *CPUSampler, before, after CPUReading, orders int64, wall time.Duration) StepCPU {
	var u CPUUsage
	u.Add(before, after)
	procs := Processes(cpu.Sources)
	out := StepCPU{Wall: wall, Processes: PerOp(u, orders, procs)}
	for i := range out.Processes {
		if why := cpu.Why(out.Processes[i].Process); out.Processes[i].Why != "" && why != "" {
			out.Processes[i].Why = why
		}
	}
	return out
}

// memory reads each process's RSS: the runtimes' only when withRuntimes.
func (r *WritesRunner) memory(ctx context.Context, withRuntimes bool) []Memory {
	var out []Memory
	for _, src := range r.Memory {
		if !withRuntimes && isRuntime(src.Runtime) {
			continue
		}
		out = append(out, ReadMemory(ctx, r.polls, r.Docker, src))
	}
	return append(out, ReadMemory(ctx, r.polls, r.Docker, MemorySource{Runtime: ProcBench, Self: true}))
}

// memoryOfRuntimes reads the runtimes' RSS only.
func (r *WritesRunner) memoryOfRuntimes(ctx context.Context) []Memory {
	var out []Memory
	for _, src := range r.Memory {
		if isRuntime(src.Runtime) {
			out = append(out, ReadMemory(ctx, r.polls, r.Docker, src))
		}
	}
	return out
}

func isRuntime(process string) bool {
	return process == ProcAccelerated || process == ProcMaterialized
}

// catchUp waits, hop after hop, until each runtime's watermark covers the
// highest position written, and returns the time from start to each.
func (r *WritesRunner) catchUp(ctx context.Context, probes []Probe, writes []Write, start time.Time) []CatchUp {
	var last Write
	for _, w := range writes {
		if w.Token > last.Token {
			last = w
		}
	}
	if last.Token.IsZero() {
		return nil
	}
	deadline := time.Now().Add(r.CatchUpTimeout)
	var out []CatchUp
	for _, p := range probes {
		c := CatchUp{Hop: p.Hop}
		for {
			status, pos, why := askAt(ctx, r.probes.HTTP, p, last.Token)
			if status/100 == 2 && pos >= last.Token {
				c.Time, c.OK = time.Since(start), true
				break
			}
			c.Why = orDefault(why, fmt.Sprintf("status %d", status))
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
