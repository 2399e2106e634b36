package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
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
	// (10 s in the runtimes, 15 s per api request), so every read ends with its
	// answer; it is only a ceiling, reads normally end in milliseconds.
	DefaultGrace       = 20 * time.Second
	DefaultSyncTimeout = 10 * time.Minute
	// DefaultChangesWindow is the window of writes only (no reads, no polling)
	// that CPU per change is measured over.
	DefaultChangesWindow = 10 * time.Second
	// DefaultWatermarkSample traces every write on the watermark hops: their
	// reads cost the runtimes little, and only during the freshness window.
	DefaultWatermarkSample = 1
)

// ErrUnreachable is returned when the API does not answer at all: nothing was
// measured. A run that measured failures returns no error.
var ErrUnreachable = errors.New("api unreachable")

// Config says what a run measures. Zero values take the Default* constants, except
// where a field says otherwise.
type Config struct {
	// BaseURL of the API, e.g. http://localhost:9999. Required.
	BaseURL string
	// Requests per scenario in the closed loop; DefaultRequests when zero. Ignored
	// when Duration is set.
	Requests int
	// Duration per scenario in the closed loop, instead of a request count.
	Duration time.Duration
	// Concurrency of the closed loop (connections); DefaultConcurrency when zero.
	Concurrency int
	// Rounds to interleave the scenarios in; DefaultRounds when zero.
	Rounds int
	// Warmup is each scenario's closed-loop warm-up; DefaultWarmup when zero,
	// none when negative.
	Warmup time.Duration
	// Rates of the open loop, req/s; none when empty.
	Rates []float64
	// OpenDuration per scenario and rate; DefaultOpenDuration when zero.
	OpenDuration time.Duration
	// MaxInFlight bounds the open loop's outstanding requests; DefaultMaxInFlight
	// when zero.
	MaxInFlight int
	// WriteRate is POST /orders per second during the run; zero writes nothing
	// (and measures no freshness).
	WriteRate float64
	// FreshnessConcurrency bounds each hop's freshness reads in flight (one read
	// per write and hop); DefaultFreshnessConcurrency when zero.
	FreshnessConcurrency int
	// FreshnessSample traces every n-th write; DefaultFreshnessSample when zero.
	FreshnessSample int
	// FreshnessWindow is the time with writes and their freshness reads only,
	// before the throughput rounds; DefaultFreshnessWindow when zero, none when
	// negative.
	FreshnessWindow time.Duration
	// Grace is how long the freshness reads still in flight after the last write
	// may take to get their answers; DefaultGrace when zero. Reads cut by its end
	// count as not seen.
	Grace time.Duration
	// SyncTimeout bounds the wait for both runtimes to reflect the data before
	// measuring; DefaultSyncTimeout when zero.
	SyncTimeout time.Duration
	// Timeout of each request; DefaultTimeout when zero.
	Timeout time.Duration
	// Scale lists order counts to seed and measure at, ascending; when empty, one
	// measurement of the current data and no seeding.
	Scale []int64
	// DB seeds and counts orders; required with Scale, optional otherwise (the
	// report then names no order count).
	DB DB
	// SeedChunk is orders per seeding statement; DefaultSeedChunk when zero.
	SeedChunk int
	// AcceleratedHTTP and MaterializedHTTP are the runtimes' HTTP API base URLs,
	// read as extra hops (without the api) when set.
	AcceleratedHTTP, MaterializedHTTP string
	// Memory says where to read each runtime's memory.
	Memory []MemorySource
	// CPU says where to read each process's CPU time (per request of each
	// scenario, per change in the changes window); none when empty.
	CPU []CPUSource
	// Project is the Compose project, to find a service's container.
	Project string
	// AcceleratedRuntime and MaterializedRuntime are the runtimes' HTTP APIs
	// (with their API keys) for the watermark hops, read during the freshness
	// window; none when their URL is empty.
	AcceleratedRuntime, MaterializedRuntime RuntimeEndpoint
	// WatermarkSample traces every n-th write on the watermark hops;
	// DefaultWatermarkSample when zero.
	WatermarkSample int
	// ChangesWindow is the window of writes only, before the freshness window,
	// that CPU per change is measured over; DefaultChangesWindow when zero, none
	// when negative.
	ChangesWindow time.Duration
	// Docker is the docker CLI for memory and the machine's description; none when
	// empty.
	Docker string
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
	cpu    *CPUSampler
	polls  *http.Client // CPU readings
}

// NewRunner returns a Runner for cfg with the defaults filled in.
func NewRunner(cfg Config) *Runner {
	setDefault(&cfg.Requests, DefaultRequests)
	setDefault(&cfg.Concurrency, DefaultConcurrency)
	setDefault(&cfg.Rounds, DefaultRounds)
	setDefault(&cfg.Warmup, DefaultWarmup)
	setDefault(&cfg.OpenDuration, DefaultOpenDuration)
	setDefault(&cfg.MaxInFlight, DefaultMaxInFlight)
	setDefault(&cfg.FreshnessConcurrency, DefaultFreshnessConcurrency)
	setDefault(&cfg.FreshnessSample, DefaultFreshnessSample)
	setDefault(&cfg.FreshnessWindow, DefaultFreshnessWindow)
	setDefault(&cfg.Grace, DefaultGrace)
	setDefault(&cfg.SyncTimeout, DefaultSyncTimeout)
	setDefault(&cfg.Timeout, DefaultTimeout)
	setDefault(&cfg.WatermarkSample, DefaultWatermarkSample)
	setDefault(&cfg.ChangesWindow, DefaultChangesWindow)
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Runner{Config: cfg}
}

func setDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v == 0 {
		*v = def
	}
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
		FreshnessSample: r.FreshnessSample,
		FreshnessWindow: max(r.FreshnessWindow, 0),
		ChangesWindow:   max(r.ChangesWindow, 0),
	}
	if r.Duration > 0 {
		s.Requests, s.Duration = 0, r.Duration
	}
	return s
}

// Run measures every size and returns the report. It fails only when the API is
// unreachable (ErrUnreachable), seeding fails, or ctx ends.
func (r *Runner) Run(ctx context.Context) (*Report, error) {
	if r.BaseURL == "" {
		return nil, errors.New("run benchmark: no base URL of the api")
	}
	if len(r.Scale) > 0 && r.DB == nil {
		return nil, errors.New("run benchmark: seeding to --scale needs postgres (--postgres-url or --postgres-container)")
	}
	r.epoch = time.Now()
	r.load = NewClient(r.BaseURL, r.Concurrency+r.MaxInFlight, r.Timeout)
	r.writes = NewClient(r.BaseURL, DefaultWriterMaxInFlight, r.Timeout)
	r.probes = NewClient("", r.FreshnessConcurrency*7+4, r.Timeout)
	defer r.load.Close()
	defer r.writes.Close()
	defer r.probes.Close()
	r.polls = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer r.polls.CloseIdleConnections()
	r.cpu = &CPUSampler{Sources: r.CPU, HTTP: r.polls, Docker: r.Docker, Project: r.Project}

	rep := &Report{Started: time.Now(), Command: r.Command, Settings: r.Settings(), Machine: DescribeMachine(ctx, r.Docker)}
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
		r.printSize(*res)
	}
	return rep, nil
}

// preflight fails with ErrUnreachable when the API does not answer its first
// scenario (/noop) at all, and notes the scenarios that do not answer 2xx.
func (r *Runner) preflight(ctx context.Context, rep *Report) error {
	for i, t := range Scenarios() {
		s := r.load.Get(ctx, t)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if s.Status == ErrorStatus && i == 0 {
			return fmt.Errorf("%w: GET %s%s: %s; is the stack up (make up) and --url right?", ErrUnreachable, r.BaseURL, t.Path, s.Err)
		}
		if s.Status/100 != 2 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("before the run, %s answered %s; measured all the same", t.Name, statusOf(s)))
			r.printf("warning: %s answered %s before the run\n", t.Name, statusOf(s))
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
		r.printf("seed: growing orders to %s\n", count(size))
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
		res.Notes = append(res.Notes, fmt.Sprintf("host load average (1, 5, 15 min) when measuring began: %s; after: %s (on %d cores: other work on the host inflates latencies and CPU per operation)",
			before, loadAverage(), runtime.NumCPU()))
	}
	return res, nil
}

// loadAverage is the host's load average (Linux), or empty.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], ", ")
}

// sync writes one order and waits until both runtimes reflect it, so that a
// measurement never starts while a runtime is still loading the seed. A runtime
// that does not get there in SyncTimeout is noted, and measured all the same.
func (r *Runner) sync(ctx context.Context, res *SizeResult) error {
	s, hdr := r.writes.Do(ctx, http.MethodPost, PathOrders, nil, nil)
	token := positionOf(s, hdr)
	if token.IsZero() {
		res.Notes = append(res.Notes, fmt.Sprintf("POST /orders gave no token before the run (%s); did not wait for the runtimes", statusOf(s)))
		return ctx.Err()
	}
	r.printf("sync: waiting up to %s for both runtimes to reflect %s\n", r.SyncTimeout, token)
	start := time.Now()
	deadline := start.Add(r.SyncTimeout)
	synced := true
	for _, path := range []string{PathAccelerated, PathMaterialized} {
		ok, last := r.waitFor(ctx, path, token, deadline)
		if err := ctx.Err(); err != nil {
			return err
		}
		if !ok {
			synced = false
			res.Notes = append(res.Notes, fmt.Sprintf("%s did not reflect %s within %s (last: %s); measured all the same", path, token, r.SyncTimeout, statusOf(last)))
			r.printf("sync: %s did not get to %s (last: %s)\n", path, token, statusOf(last))
		}
	}
	res.SyncTime = time.Since(start)
	if synced {
		r.printf("sync: done in %.1fs\n", res.SyncTime.Seconds())
	}
	return nil
}

// waitFor reads path with Spice-Min-Position until it reports token or later, or
// deadline passes; it returns the last answer.
func (r *Runner) waitFor(ctx context.Context, path string, token position.LSN, deadline time.Time) (bool, Sample) {
	hdr := http.Header{wire.HeaderMinPosition: {token.String()}}
	last := time.Now()
	for {
		s, h := r.writes.Do(ctx, http.MethodGet, path, hdr, nil)
		if positionOf(s, h) >= token {
			return true, s
		}
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return false, s
		}
		if time.Since(last) > 5*time.Second {
			r.printf("sync: %s not at %s yet (%s)\n", path, token, statusOf(s))
			last = time.Now()
		}
		sleepUntil(ctx, time.Now().Add(200*time.Millisecond))
	}
}

func statusOf(s Sample) string {
	if s.Status == ErrorStatus {
		return s.Err
	}
	return fmt.Sprintf("status %d", s.Status)
}
