package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/position"
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
	// DefaultGrace outlasts the servers' own bound on a Spice-Min-Position wait
	// (10 s in the runtimes, 15 s per api request), so every read ends with
	// its answer; reads normally end in milliseconds.
	DefaultGrace       = 20 * time.Second
	DefaultSyncTimeout = 10 * time.Minute
	// DefaultChangesWindow is the window of writes only (no reads) that CPU per
	// change is measured over.
	DefaultChangesWindow = 10 * time.Second
	// DefaultWatermarkSample traces every write on the watermark hops: their
	// reads cost the runtimes little, and only during the freshness window.
	DefaultWatermarkSample = 1
)

// ErrUnreachable is returned when the api does not answer at all: nothing was
// measured. A run that measured failures returns no error.
var ErrUnreachable = errors.New("api unreachable")

// Config says what a run measures. Zero values take the Default* constants;
// a negative Warmup, FreshnessWindow or ChangesWindow means none.
type Config struct {
	BaseURL     string        // the api, e.g. http://localhost:9999; required
	Requests    int           // closed loop: requests per scenario, unless Duration
	Duration    time.Duration // closed loop: time per scenario
	Concurrency int           // closed loop: connections
	Rounds      int           // rounds the scenarios are interleaved in
	Warmup      time.Duration // closed-loop warm-up per scenario
	Rates       []float64     // open loop: req/s; none when empty
	// OpenDuration is the open loop's time per scenario and rate; MaxInFlight
	// bounds its outstanding requests.
	OpenDuration time.Duration
	MaxInFlight  int
	// WriteRate is POST /orders per second during the run; zero writes nothing
	// and measures no freshness.
	WriteRate float64
	// FreshnessConcurrency bounds each hop's freshness reads in flight;
	// FreshnessSample traces every n-th write.
	FreshnessConcurrency int
	FreshnessSample      int
	// FreshnessWindow is the time with writes and their reads only, before
	// the rounds; Grace the most the reads still in flight after the last
	// write may take (those cut count as not seen).
	FreshnessWindow time.Duration
	Grace           time.Duration
	// SyncTimeout bounds the wait for both runtimes to reflect the data.
	SyncTimeout time.Duration
	Timeout     time.Duration // of each request
	// Scale lists order counts to seed and measure at, ascending; when empty,
	// one measurement of the current data.
	Scale []int64
	// DB seeds and counts orders; required with Scale.
	DB        DB
	SeedChunk int
	// AcceleratedHTTP and MaterializedHTTP are the runtimes' HTTP APIs, read
	// as extra hops (without the api) when set.
	AcceleratedHTTP, MaterializedHTTP string
	// Stack and Processes say where each process's CPU and memory are read.
	Stack     *Stack
	Processes []Process
	// AcceleratedRuntime and MaterializedRuntime are the runtimes' HTTP APIs
	// for the watermark hops of the freshness window; none when empty.
	AcceleratedRuntime, MaterializedRuntime RuntimeEndpoint
	WatermarkSample                         int
	// ChangesWindow is the window of writes only that CPU per change is
	// measured over, before the freshness window.
	ChangesWindow time.Duration
	// Quick and Command are recorded in the report.
	Quick   bool
	Command string
}

// Runner runs a benchmark. Out receives progress; nothing is printed when nil.
type Runner struct {
	Config
	Out io.Writer

	epoch  time.Time
	load   *Client
	writes *Client
	probes *Client
	meter  *Meter
}

// NewRunner returns a Runner for cfg with the defaults filled in.
func NewRunner(cfg Config) *Runner {
	cfg.Requests = cmp.Or(cfg.Requests, DefaultRequests)
	cfg.Concurrency = cmp.Or(cfg.Concurrency, DefaultConcurrency)
	cfg.Rounds = cmp.Or(cfg.Rounds, DefaultRounds)
	cfg.Warmup = cmp.Or(cfg.Warmup, DefaultWarmup)
	cfg.OpenDuration = cmp.Or(cfg.OpenDuration, DefaultOpenDuration)
	cfg.MaxInFlight = cmp.Or(cfg.MaxInFlight, DefaultMaxInFlight)
	cfg.FreshnessConcurrency = cmp.Or(cfg.FreshnessConcurrency, DefaultFreshnessConcurrency)
	cfg.FreshnessSample = cmp.Or(cfg.FreshnessSample, DefaultFreshnessSample)
	cfg.FreshnessWindow = cmp.Or(cfg.FreshnessWindow, DefaultFreshnessWindow)
	cfg.Grace = cmp.Or(cfg.Grace, DefaultGrace)
	cfg.SyncTimeout = cmp.Or(cfg.SyncTimeout, DefaultSyncTimeout)
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.WatermarkSample = cmp.Or(cfg.WatermarkSample, DefaultWatermarkSample)
	cfg.ChangesWindow = cmp.Or(cfg.ChangesWindow, DefaultChangesWindow)
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Runner{Config: cfg}
}

func (r *Runner) printf(format string, args ...any) {
	if r.Out != nil {
		fmt.Fprintf(r.Out, format, args...)
	}
}

// Settings returns the settings the report records.
func (r *Runner) Settings() Settings {
	s := Settings{
		BaseURL: r.BaseURL, Quick: r.Quick, Requests: r.Requests, Concurrency: r.Concurrency,
		Rounds: r.Rounds, Warmup: max(r.Warmup, 0), Rates: r.Rates, OpenDuration: r.OpenDuration,
		MaxInFlight: r.MaxInFlight, WriteRate: r.WriteRate, FreshnessConcurrency: r.FreshnessConcurrency,
		FreshnessSample: r.FreshnessSample, FreshnessWindow: max(r.FreshnessWindow, 0), ChangesWindow: max(r.ChangesWindow, 0),
	}
	if r.Duration > 0 {
		s.Requests, s.Duration = 0, r.Duration
	}
	return s
}

// Run measures every size and returns the report. It fails only when the api
// is unreachable (ErrUnreachable), seeding fails, or ctx ends.
func (r *Runner) Run(ctx context.Context) (*Report, error) {
	if r.BaseURL == "" {
		return nil, errors.New("run benchmark: no base URL of the api")
	}
	if len(r.Scale) > 0 && r.DB == nil {
		return nil, errors.New("run benchmark: seeding to --scale needs Postgres at --postgres-url")
	}
	r.epoch = time.Now()
	r.load = NewClient(r.BaseURL, r.Concurrency+r.MaxInFlight, r.Timeout)
	r.writes = NewClient(r.BaseURL, DefaultWriterMaxInFlight, r.Timeout)
	r.probes = NewClient("", r.FreshnessConcurrency*7+4, r.Timeout)
	defer r.load.Close()
	defer r.writes.Close()
	defer r.probes.Close()
	r.meter = &Meter{Stack: r.Stack, HTTP: &http.Client{Timeout: 2 * time.Second}, Processes: r.Processes}

	rep := &Report{Started: time.Now(), Command: r.Command, Settings: r.Settings(), Machine: DescribeMachine(ctx, r.Stack)}
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
		r.printf("%s\n", SizeText(*res))
	}
	return rep, nil
}

// preflight fails with ErrUnreachable when the api does not answer its first
// scenario (/noop) at all, and notes the scenarios that do not answer 2xx.
func (r *Runner) preflight(ctx context.Context, rep *Report) error {
	for i, t := range Scenarios() {
		status, _, msg := r.load.Do(ctx, http.MethodGet, t.Path, nil, nil)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if status == ErrorStatus && i == 0 {
			return fmt.Errorf("%w: GET %s%s: %s; is the stack up (make up) and --url right?", ErrUnreachable, r.BaseURL, t.Path, msg)
		}
		if status/100 != 2 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("before the run, %s answered %s; measured all the same", t.Name, statusText(status, msg)))
		}
	}
	return nil
}

// runSize seeds to size (0: as is), waits for the runtimes, and measures.
func (r *Runner) runSize(ctx context.Context, size int64) (*SizeResult, error) {
	res := &SizeResult{Orders: -1}
	if size > 0 {
		seeder := NewSeeder(r.DB)
		seeder.Chunk, seeder.Out = r.SeedChunk, r.Out
		start := time.Now()
		added, err := seeder.SeedTo(ctx, size)
		if err != nil {
			return nil, err
		}
		res.Seeded, res.SeedTime = added, time.Since(start)
		if added == 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("the table already held at least %s orders; measured as is", count(size)))
		}
	}
	if r.DB != nil {
		n, err := NewSeeder(r.DB).Count(ctx)
		if err != nil {
			return nil, err
		}
		res.Orders = n
	}
	if err := r.sync(ctx, res); err != nil {
		return nil, err
	}
	before := loadAverage()
	if err := r.measure(ctx, res); err != nil {
		return nil, err
	}
	if before != "" {
		res.Notes = append(res.Notes, fmt.Sprintf("host load average (1, 5, 15 min) when measuring began: %s; after: %s (other work on the host inflates latencies and CPU per operation)",
			before, loadAverage()))
	}
	return res, nil
}

// sync writes one order and waits until both runtimes reflect it, so that a
// measurement never starts while a runtime is still loading the seed. A
// runtime that does not get there in SyncTimeout is noted, and measured all
// the same.
func (r *Runner) sync(ctx context.Context, res *SizeResult) error {
	status, hdr, msg := r.writes.Do(ctx, http.MethodPost, PathOrders, nil, nil)
	token := positionOf(status, hdr)
	if token.IsZero() {
		res.Notes = append(res.Notes, fmt.Sprintf("POST /orders gave no token before the run (%s); did not wait for the runtimes", statusText(status, msg)))
		return ctx.Err()
	}
	r.printf("sync: waiting up to %s for both runtimes to reflect %s\n", r.SyncTimeout, token)
	start := time.Now()
	hdrs := http.Header{wire.HeaderMinPosition: {token.String()}}
	for _, path := range []string{PathAccelerated, PathMaterialized} {
		last := ""
		err := Poll(ctx, time.Until(start.Add(r.SyncTimeout)), 200*time.Millisecond, path, func() bool {
			status, hdr, msg := r.writes.Do(ctx, http.MethodGet, path, hdrs, nil)
			last = statusText(status, msg)
			return positionOf(status, hdr) >= token
		})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("%s did not reflect %s within %s (last: %s); measured all the same", path, token, r.SyncTimeout, last))
		}
	}
	res.SyncTime = time.Since(start)
	r.printf("sync: done in %.1fs\n", res.SyncTime.Seconds())
	return nil
}

// positionOf is the Spice-Position of a 2xx answer; zero otherwise.
func positionOf(status int, hdr http.Header) position.LSN {
	if status/100 != 2 || hdr == nil {
		return 0
	}
	pos, _ := position.Parse(hdr.Get(wire.HeaderPosition))
	return pos
}
