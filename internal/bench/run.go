package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/wire"
)

// Defaults of a run, as `bench` uses them without flags.
const (
	DefaultRequests        = 20_000 // per scenario, as the recipe's oha -n20000
	DefaultConcurrency     = 100    // as the recipe's oha -c100
	DefaultRounds          = 10
	DefaultWarmup          = 2 * time.Second // per scenario
	DefaultOpenDuration    = 10 * time.Second
	DefaultFreshnessWindow = 15 * time.Second
	DefaultChangesWindow   = 10 * time.Second
	// DefaultGrace outlasts the servers' own bound on a Spice-Min-Position wait
	// (10 s in the runtimes, 15 s per api request), so every read ends with
	// its answer; reads normally end in milliseconds.
	DefaultGrace       = 20 * time.Second
	DefaultSyncTimeout = 10 * time.Minute
	// watermarkGrace bounds the wait, after the freshness window, for the
	// watermark reads still in flight; the runtimes answer them within 10 s.
	watermarkGrace = 12 * time.Second
)

// runtimeQuery is what the runtime hops ask a runtime's HTTP API directly:
// the ranking, whose answer carries the position of the data it reflects.
const runtimeQuery = "SELECT name, count FROM rankings"

// ErrUnreachable is returned when the api does not answer at all: nothing was
// measured. A run that measured failures returns no error.
var ErrUnreachable = errors.New("api unreachable")

// Settings are the knobs of a run, which its report records. A zero Warmup,
// WriteRate, FreshnessWindow or ChangesWindow skips that part; other zero
// values take the Default* constants.
type Settings struct {
	BaseURL      string        `json:"base_url"` // the api, e.g. http://localhost:9999; required
	Quick        bool          `json:"quick"`
	Requests     int           `json:"requests"`         // closed loop, per scenario; 0 when by Duration
	Duration     time.Duration `json:"duration_ns"`      // closed loop, per scenario, instead of Requests
	Concurrency  int           `json:"concurrency"`      // closed loop: connections
	Rounds       int           `json:"rounds"`           // the scenarios are interleaved in
	Warmup       time.Duration `json:"warmup_ns"`        // closed loop, per scenario
	Rates        []float64     `json:"rates,omitempty"`  // open loop, req/s
	OpenDuration time.Duration `json:"open_duration_ns"` // open loop, per scenario and rate
	MaxInFlight  int           `json:"max_in_flight"`    // open loop: most requests outstanding
	WriteRate    float64       `json:"write_rate"`       // POST /orders per second during the run
	// FreshnessConcurrency bounds each hop's freshness reads in flight;
	// FreshnessSample traces every n-th write through the hops.
	FreshnessConcurrency int `json:"freshness_concurrency"`
	FreshnessSample      int `json:"freshness_sample"`
	// FreshnessWindow is the time with writes and their reads only, before
	// the rounds; ChangesWindow the time with writes only, before that, that
	// CPU per change is measured over; Grace the most the reads still in
	// flight after the last write may take (those cut count as not seen).
	FreshnessWindow time.Duration `json:"freshness_window_ns"`
	ChangesWindow   time.Duration `json:"changes_window_ns,omitempty"`
	Grace           time.Duration `json:"grace_ns"`
	SyncTimeout     time.Duration `json:"sync_timeout_ns"` // most the wait for both runtimes to reflect the data
	Timeout         time.Duration `json:"timeout_ns"`      // of each request
	// RuntimeHops adds the ranking read on each runtime's HTTP API (without
	// the api) to the freshness hops.
	RuntimeHops bool `json:"runtime_hops,omitempty"`
}

// Config says what a run measures and where.
type Config struct {
	Settings
	// Scale lists order counts to seed and measure at, ascending; when empty,
	// one measurement of the current data.
	Scale []int64
	DB    *Postgres // seeds and counts orders; required with Scale
	// Accelerated and Materialized are the runtimes' HTTP APIs: the watermark
	// hops of the freshness window, and the runtime hops; none when empty.
	Accelerated, Materialized RuntimeEndpoint
	// Stack and Processes say where each process's CPU and memory are read.
	Stack     *Stack
	Processes []Process
	Command   string // recorded in the report
}

// Runner runs a benchmark. Out receives progress; nothing is printed when nil.
type Runner struct {
	Config
	progress

	epoch                time.Time
	load, writes, probes *Client
	meter                *Meter
}

// NewRunner returns a Runner for cfg with the defaults filled in.
func NewRunner(cfg Config) *Runner {
	s := &cfg.Settings
	if s.Duration > 0 {
		s.Requests = 0
	} else {
		s.Requests = cmp.Or(s.Requests, DefaultRequests)
	}
	s.Concurrency, s.Rounds = cmp.Or(s.Concurrency, DefaultConcurrency), cmp.Or(s.Rounds, DefaultRounds)
	s.OpenDuration, s.MaxInFlight = cmp.Or(s.OpenDuration, DefaultOpenDuration), cmp.Or(s.MaxInFlight, DefaultMaxInFlight)
	s.FreshnessConcurrency = cmp.Or(s.FreshnessConcurrency, DefaultFreshnessConcurrency)
	s.FreshnessSample = cmp.Or(s.FreshnessSample, DefaultFreshnessSample)
	s.Grace, s.SyncTimeout = cmp.Or(s.Grace, DefaultGrace), cmp.Or(s.SyncTimeout, DefaultSyncTimeout)
	s.Timeout, s.BaseURL = cmp.Or(s.Timeout, DefaultTimeout), strings.TrimRight(s.BaseURL, "/")
	return &Runner{Config: cfg}
}

// Run measures every size and returns the report. It fails only when the api
// is unreachable (ErrUnreachable), seeding fails, or ctx ends.
func (r *Runner) Run(ctx context.Context) (*Report, error) {
	switch {
	case r.BaseURL == "":
		return nil, errors.New("run benchmark: no base URL of the api")
	case len(r.Scale) > 0 && r.DB == nil:
		return nil, errors.New("run benchmark: seeding to --scale needs Postgres at --postgres-url")
	}
	r.epoch = time.Now()
	r.load = NewClient(r.BaseURL, r.Concurrency+r.MaxInFlight, r.Timeout)
	r.writes = NewClient(r.BaseURL, DefaultWriterMaxInFlight, r.Timeout)
	r.probes = NewClient("", r.FreshnessConcurrency*7+4, r.Timeout)
	r.meter = &Meter{Stack: r.Stack, HTTP: &http.Client{Timeout: 2 * time.Second}, Processes: r.Processes}
	for _, c := range []*Client{r.load, r.writes, r.probes} {
		defer c.Close()
	}
	rep := &Report{Header: newHeader(ctx, r.Stack, r.Command), Settings: r.Settings}
	if err := r.preflight(ctx, rep); err != nil {
		return nil, err
	}
	sizes := r.Scale
	if len(sizes) == 0 {
		sizes = []int64{0}
	}
	for _, size := range sizes {
		res, err := r.runSize(ctx, size)
		if err != nil {
			return rep, err
		}
		rep.Sizes = append(rep.Sizes, *res)
		r.printf("%s\n", render("size-text", res))
	}
	return rep, nil
}

// preflight fails with ErrUnreachable when the api does not answer its first
// scenario (/noop) at all, and notes the scenarios that do not answer 2xx.
func (r *Runner) preflight(ctx context.Context, rep *Report) error {
	for i, t := range Scenarios() {
		status, _, msg := r.load.Do(ctx, http.MethodGet, t.Path, nil, "")
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case status == ErrorStatus && i == 0:
			return fmt.Errorf("%w: GET %s%s: %s; is the stack up (make up) and --url right?", ErrUnreachable, r.BaseURL, t.Path, msg)
		case status/100 != 2:
			rep.Notes = append(rep.Notes, fmt.Sprintf("before the run, %s answered %s; measured all the same", t.Name, statusText(status, msg)))
		}
	}
	return nil
}

// runSize seeds to size (0: as is), waits for the runtimes, and measures.
func (r *Runner) runSize(ctx context.Context, size int64) (*SizeResult, error) {
	res := &SizeResult{Orders: -1}
	if size > 0 {
		r.DB.Out = r.Out
		start := time.Now()
		added, err := r.DB.SeedTo(ctx, size)
		if err != nil {
			return nil, err
		}
		res.Seeded, res.SeedTime = added, time.Since(start)
		if added == 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("the table already held at least %s orders; measured as is", count(size)))
		}
	}
	if r.DB != nil {
		n, err := r.DB.Count(ctx)
		if err != nil {
			return nil, err
		}
		res.Orders = n
	}
	if err := r.sync(ctx, res); err != nil {
		return nil, err
	}
	before := loadAverage()
	err := r.measure(ctx, res)
	res.Notes, res.Goals = append(res.Notes, loadNote(before)...), Goals(*res, r.Concurrency)
	return res, err
}

// sync writes one order and waits until both runtimes reflect it, so that a
// measurement never starts while a runtime is still loading the seed. A
// runtime that does not get there in SyncTimeout is noted, and measured all
// the same.
func (r *Runner) sync(ctx context.Context, res *SizeResult) error {
	r.printf("sync: waiting up to %s for both runtimes to reflect a write\n", r.SyncTimeout)
	start := time.Now()
	cus, err := Sync(ctx, r.writes, r.probeList()[1:3], r.SyncTimeout)
	if err != nil && ctx.Err() == nil {
		res.Notes = append(res.Notes, fmt.Sprintf("%v before the run; did not wait for the runtimes", err))
	}
	for _, c := range cus {
		if !c.OK {
			res.Notes = append(res.Notes, fmt.Sprintf("%s did not reflect a write within %s (last: %s); measured all the same", c.Hop, r.SyncTimeout, c.Why))
		}
	}
	res.SyncTime = time.Since(start)
	r.printf("sync: done in %.1fs\n", res.SyncTime.Seconds())
	return ctx.Err()
}

// probeList returns the hops to watch: the api's three ranking paths, and the
// runtimes' own HTTP APIs with RuntimeHops.
func (r *Runner) probeList() []Probe {
	probes := []Probe{
		{Hop: HopPostgres, URL: r.BaseURL + PathRanking},
		{Hop: HopAccelerated, URL: r.BaseURL + PathAccelerated},
		{Hop: HopMaterialized, URL: r.BaseURL + PathMaterialized},
	}
	if r.RuntimeHops {
		probes = append(probes, query(HopAcceleratedRuntime, r.Accelerated, runtimeQuery)...)
		probes = append(probes, query(HopMaterializedRuntime, r.Materialized, runtimeQuery)...)
	}
	return probes
}

// measure runs one size's phases under the writer: warm-up, changes window,
// freshness window, closed-loop rounds, open-loop rounds, grace. From the
// freshness window on, each traced write is read once per hop (Watch).
func (r *Runner) measure(ctx context.Context, res *SizeResult) error {
	probes := r.probeList()
	writer := NewWriter(r.writes, r.WriteRate, r.epoch)
	watch := NewWatch(r.probes, probes, r.epoch, r.FreshnessConcurrency, r.FreshnessSample)
	// The watermark hops read every write, during the freshness window only:
	// their reads would count in the CPU per request of the rounds.
	wm := NewWatch(r.probes, watermarkProbes(r.Accelerated, r.Materialized), r.epoch, r.FreshnessConcurrency, 1)
	writer.OnWrite = func(w Write) { watch.Read(w); wm.Read(w) }
	writer.Open()
	defer writer.Close()
	defer watch.Close(ctx) // at once when ctx ended; a no-op after the grace below

	scen := Scenarios()
	if r.Warmup > 0 {
		r.printf("warm-up: %s per scenario\n", r.Warmup)
		for _, t := range scen {
			r.load.Closed(ctx, t, r.Concurrency, 0, r.Warmup, NewRecorder())
		}
	}
	if r.ChangesWindow > 0 && r.WriteRate > 0 {
		res.Changes = r.changesWindow(ctx, writer)
	}
	watch.Open() // before idleFrom: every write of the phases is then read
	idleFrom := time.Since(r.epoch)
	if r.FreshnessWindow > 0 {
		wm.Open()
		r.printf("freshness: %s of writes at %g/s, every %d. read once per hop, no other read load", r.FreshnessWindow, r.WriteRate, r.FreshnessSample)
		if len(wm.probes) > 0 {
			r.printf("; every write on the runtimes' watermarks")
		}
		r.printf("\n")
		sleepUntil(ctx, time.Now().Add(r.FreshnessWindow))
		to := time.Since(r.epoch)
		gctx, cancel := context.WithTimeout(ctx, watermarkGrace)
		traced, answers := wm.Close(gctx)
		cancel()
		res.Watermarks = freshness(hopsOf(wm.probes), traced, answers, idleFrom, to, PhaseIdle)
	}
	loadFrom := time.Since(r.epoch)
	var bg Background
	if res.Changes != nil {
		bg = BackgroundOf(res.Changes.CPU, res.Changes.Duration)
	}
	counts, times := Split(r.Requests, r.Rounds), SplitDuration(r.Duration, r.Rounds)
	res.Closed = r.rounds(ctx, scen, "closed loop", len(r.Processes) > 0, bg, func(t Target, round int, rec *Recorder) {
		r.load.Closed(ctx, t, r.Concurrency, counts[round], times[round], rec)
	})
	for _, rate := range r.Rates {
		times := SplitDuration(r.OpenDuration, r.Rounds)
		res.Open = append(res.Open, OpenResult{Rate: rate, Results: r.rounds(ctx, scen, fmt.Sprintf("open loop at %g req/s", rate), false, nil,
			func(t Target, round int, rec *Recorder) { r.load.Open(ctx, t, rate, times[round], r.MaxInFlight, rec) })})
	}
	loadTo := time.Since(r.epoch)
	if err := ctx.Err(); err != nil {
		return err
	}
	writer.Close()
	// Grace: the last writes' reads get their answers, seen or not.
	gctx, cancel := context.WithTimeout(ctx, r.Grace)
	traced, answers := watch.Close(gctx)
	cancel()

	res.Writer = writer.Summary()
	hops := hopsOf(probes)
	res.Freshness = append(freshness(hops, traced, answers, idleFrom, loadFrom, PhaseIdle), freshness(hops, traced, answers, loadFrom, loadTo, PhaseLoad)...)
	res.Notes = append(res.Notes, notes(res.Freshness, res.Closed, r.FreshnessConcurrency)...)
	for _, m := range r.meter.Memory(ctx) {
		if isRuntime(m.Process) {
			res.Memory = append(res.Memory, m)
		}
	}
	return ctx.Err()
}

// rounds runs every scenario once per round, in the order of Order, each
// turn as run says; with cpu, each scenario's CPU per request is read around
// its turns, and given net of bg too (the background: writes, no reads).
func (r *Runner) rounds(ctx context.Context, scen []Target, title string, cpu bool, bg Background, run func(Target, int, *Recorder)) []ScenarioResult {
	out := make([]ScenarioResult, len(scen))
	recs, usage, wall := make([]*Recorder, len(scen)), make([]CPUTime, len(scen)), make([]time.Duration, len(scen))
	for i := range recs {
		recs[i] = NewRecorder()
	}
	for i, turn := range Order(len(scen), r.Rounds) {
		if i%len(scen) == 0 {
			r.printf("%s: round %d/%d\n", title, turn.Round+1, r.Rounds)
		}
		s := turn.Scenario
		if do := func() { run(scen[s], turn.Round, recs[s]) }; cpu {
			wall[s] += r.meter.Span(ctx, &usage[s], do)
		} else {
			do()
		}
	}
	for i, t := range scen {
		out[i] = ScenarioResult{Target: t, Summary: recs[i].Summary()}
		if cpu {
			out[i].CPU = PerOp(usage[i], out[i].Summary.Requests, Names(r.Processes))
			SubtractBackground(out[i].CPU, bg, wall[i], out[i].Summary.Requests)
		}
	}
	Ratios(out)
	return out
}

// changesWindow lets the writer write with no reads for ChangesWindow and
// returns each process's CPU per write acknowledged in it.
func (r *Runner) changesWindow(ctx context.Context, writer *Writer) *ChangeCost {
	r.printf("changes: %s of writes at %g/s only (no reads): CPU per change\n", r.ChangesWindow, r.WriteRate)
	var t CPUTime
	d := r.meter.Span(ctx, &t, func() { sleepUntil(ctx, time.Now().Add(r.ChangesWindow)) })
	to := time.Since(r.epoch)
	n := int64(len(Between(writer.Writes(), to-d, to)))
	return &ChangeCost{Duration: d, Writes: n, CPU: PerOp(t, n, Names(r.Processes))}
}

// notes reports read-your-writes violations, loudly, reads whose lag includes
// a wait for one of the conc slots, and cache-off scenarios that were served
// from the cache (the api did not pass Cache-Control: no-cache on).
func notes(fs []Freshness, rs []ScenarioResult, conc int) []string {
	var out []string
	for _, f := range fs {
		if f.Violations > 0 {
			out = append(out, fmt.Sprintf("**READ-YOUR-WRITES VIOLATED**: %s (%s) answered %d of %d reads at a position below their Spice-Min-Position (first: %s). This is a correctness bug of that hop, not of the benchmark.",
				f.Hop, f.Phase, f.Violations, f.Writes, f.Violation))
		}
	}
	for _, f := range fs {
		if f.Queued > 0 {
			out = append(out, fmt.Sprintf("freshness: %d of %d reads of %s (%s) waited for one of the %d slots per hop (--freshness-concurrency); their lags include that wait",
				f.Queued, f.Reached, f.Hop, f.Phase, conc))
		}
	}
	for _, r := range rs {
		if hits := r.Summary.Cache[wire.CacheHit]; r.Target.NoCache && hits > 0 {
			out = append(out, fmt.Sprintf("%s: %d answers were cache HITs; the api must pass Cache-Control: no-cache on to the runtime", r.Target.Name, hits))
		}
	}
	return out
}
