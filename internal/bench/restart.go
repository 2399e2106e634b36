package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// What the restart benchmark restarts: runtime 1 in each acceleration mode, and
// runtime 2.
const (
	RestartMemory       = "memory"       // runtime 1, mode: memory: a new snapshot on every start
	RestartFile         = "file"         // runtime 1, mode: file: resumes from the file and the slot
	RestartMaterialized = "materialized" // runtime 2: subscribes again (snapshot of the view, then changes)
)

// How a runtime is restarted.
const (
	RestartStop  = "stop"  // SIGTERM (it drains and shuts down cleanly), then start
	RestartKill  = "kill"  // SIGKILL, then start: a crash
	RestartFirst = "first" // mode: file only: the container created anew on an empty or stale file
)

// Defaults of RestartConfig.
const (
	DefaultRestartRounds         = 3
	DefaultReadyTimeout          = 10 * time.Minute
	DefaultRestartCatchUpTimeout = 2 * time.Minute
	DefaultRestartWriteRate      = 50.0
	// restartPoll is how often a starting runtime is polled: the granularity
	// of the times to ready and caught up.
	restartPoll = 25 * time.Millisecond
)

// Compose services the restart benchmark drives.
const (
	serviceAccelerated  = "accelerated"
	serviceMaterialized = "materialized"
)

// RestartConfig configures a restart benchmark run.
type RestartConfig struct {
	Sizes   []int64  // orders to seed to, ascending; none: the data as it is
	Targets []string // RestartMemory, RestartFile, RestartMaterialized, in this order
	Kinds   []string // RestartStop, RestartKill
	Rounds  int      // restarts of each target and kind; DefaultRestartRounds when zero
	// WriteRate is orders per second written into Postgres (in their own
	// connection, Writes) while the runtimes restart, so a resume has changes to
	// catch up on; none when zero or Writes is nil.
	WriteRate    float64
	ReadyTimeout time.Duration // DefaultReadyTimeout when zero
	// CatchUpTimeout bounds the wait, once ready, for the watermark to cover
	// Postgres's position at the start; DefaultRestartCatchUpTimeout when zero.
	CatchUpTimeout time.Duration

	// Accelerated and Materialized are the runtimes' HTTP APIs (GET
	// /v1/ready needs no key) and Prometheus endpoints.
	Accelerated, Materialized RuntimeEndpoint

	DB     *Postgres // seeds, counts, times COPY, reads pg_current_wal_lsn()
	Writes *Postgres // a second connection for the writes during restarts; none when nil
	// Stack is the compose project; MemoryFiles and FileFiles its compose
	// files with runtime 1 in mode: memory and in mode: file.
	Stack                  *Stack
	MemoryFiles, FileFiles []string
	Command                string    // the command line, for the report
	Out                    io.Writer // progress; none when nil
}

// RestartResult is one restart.
type RestartResult struct {
	Orders int64  `json:"orders"`
	Target string `json:"target"`
	Kind   string `json:"kind"`
	Round  int    `json:"round"`
	// Ready is from the process's start to its /v1/ready answering 200.
	Ready time.Duration `json:"ready_ns"`
	// FirstLog is from the process's start to its first log line (the binary
	// loaded, Go running), zero when the log did not say.
	FirstLog time.Duration `json:"first_log_ns"`
	// Listening is from the process's start to "runtime started" (servers up),
	// zero when the log did not say.
	Listening time.Duration `json:"listening_ns"`
	// CaughtUp is from the process's start to the runtime's watermark covering
	// Postgres's position right after the start; zero when it did not in time.
	CaughtUp time.Duration `json:"caught_up_ns"`
	// CopyTook is Postgres's COPY of orders to /dev/null timed just before a
	// restart that takes a snapshot (0: none), so that the snapshot's read speed
	// is compared with COPY under the same load of the machine.
	CopyTook time.Duration `json:"copy_took_ns"`
	// PeakRSS is the process's VmHWM when /proc shows it (on the Docker host),
	// else the highest process_resident_memory_bytes sampled while starting.
	PeakRSS   int64    `json:"peak_rss_bytes"`
	RSSSource string   `json:"rss_source"`
	Log       StartLog `json:"log"`
	Err       string   `json:"error,omitempty"`
}

// CopyTiming is Postgres's own COPY of the orders table to /dev/null at one
// size: the read speed a snapshot is compared with.
type CopyTiming struct {
	Orders int64         `json:"orders"`
	Took   time.Duration `json:"took_ns"` // the median of Runs; 0 when none was timed
	Runs   int           `json:"runs"`
}

// RestartReport is a restart benchmark run.
type RestartReport struct {
	Header
	Rounds    int             `json:"rounds"`
	WriteRate float64         `json:"write_rate"`
	Copies    []CopyTiming    `json:"copies"`
	Results   []RestartResult `json:"results"`
}

// RestartRunner runs the restart benchmark.
type RestartRunner struct {
	progress
	cfg    RestartConfig
	client *Client
	rep    *RestartReport
}

// NewRestartRunner returns a runner for cfg with its defaults filled in.
func NewRestartRunner(cfg RestartConfig) *RestartRunner {
	cfg.Rounds = cmp.Or(max(cfg.Rounds, 0), DefaultRestartRounds)
	cfg.ReadyTimeout = cmp.Or(max(cfg.ReadyTimeout, 0), DefaultReadyTimeout)
	cfg.CatchUpTimeout = cmp.Or(max(cfg.CatchUpTimeout, 0), DefaultRestartCatchUpTimeout)
	return &RestartRunner{progress: progress{cfg.Out}, cfg: cfg, client: NewClient("", 4, 2*time.Second)}
}

// Run measures every size, target and kind; it fails when the stack cannot be
// driven or seeded, never because a restart was slow. It leaves runtime 1 in
// mode: memory, as docker-compose.yml runs it.
func (r *RestartRunner) Run(ctx context.Context) (*RestartReport, error) {
	c := r.cfg
	r.rep = &RestartReport{Header: newHeader(ctx, c.Stack, c.Command), Rounds: c.Rounds}
	if c.Writes != nil {
		r.rep.WriteRate = c.WriteRate
	}
	before := loadAverage()
	defer func() { r.rep.Notes = append(r.rep.Notes, loadNote(before)...) }()
	if err := r.useMode(ctx, RestartMemory, true); err != nil {
		return r.rep, err
	}
	sizes := c.Sizes
	if len(sizes) == 0 {
		sizes = []int64{0}
	}
	for _, size := range sizes {
		if err := r.runSize(ctx, size); err != nil {
			return r.rep, err
		}
	}
	return r.rep, nil
}

// runSize seeds with both runtimes stopped (runtime 1 in mode: memory keeps no
// slot, so Postgres alone does the work), times COPY, and restarts each target.
func (r *RestartRunner) runSize(ctx context.Context, size int64) error {
	if err := r.seed(ctx, size); err != nil {
		return err
	}
	orders, err := r.cfg.DB.Count(ctx)
	if err != nil {
		return err
	}
	defer r.startWrites(ctx)()
	defer func() { r.rep.Copies = append(r.rep.Copies, sizeCopy(r.rep.Results, orders)) }()
	for _, target := range r.cfg.Targets {
		if target == RestartFile {
			if err := r.useMode(ctx, RestartFile, false); err != nil {
				return err
			}
			r.measure(ctx, orders, target, RestartFirst, 1, nil)
		}
		for _, kind := range r.cfg.Kinds {
			for round := 1; round <= r.cfg.Rounds; round++ {
				r.measure(ctx, orders, target, kind, round, func(ctx context.Context) error {
					if err := r.stop(ctx, runtimeOf(target).service, kind == RestartKill); err != nil {
						return err
					}
					return r.cfg.Stack.Start(ctx, runtimeOf(target).service)
				})
			}
		}
		if target == RestartFile {
			if err := r.useMode(ctx, RestartMemory, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// seed grows orders to size with both runtimes stopped, then starts them.
func (r *RestartRunner) seed(ctx context.Context, size int64) error {
	if have, err := r.cfg.DB.Count(ctx); err != nil || have >= size {
		return err
	}
	r.printf("seed: runtimes stopped while orders grow to %s\n", count(size))
	for _, s := range []string{serviceMaterialized, serviceAccelerated} {
		if err := r.stop(ctx, s, false); err != nil {
			return err
		}
	}
	r.cfg.DB.Out = r.Out
	if _, err := r.cfg.DB.SeedTo(ctx, size); err != nil {
		return err
	}
	for _, s := range []string{serviceAccelerated, serviceMaterialized} {
		if err := r.cfg.Stack.Start(ctx, s); err != nil {
			return err
		}
		if _, err := r.waitReady(ctx, r.urls(s), time.Now(), nil); err != nil {
			return err
		}
	}
	return nil
}

// useMode runs compose up for runtime 1 with the mode's files (compose
// re-creates the container only when its configuration changed) and, with
// wait, waits until both runtimes are ready.
func (r *RestartRunner) useMode(ctx context.Context, mode string, wait bool) error {
	files := r.cfg.MemoryFiles
	if mode == RestartFile {
		files = r.cfg.FileFiles
	}
	if _, err := r.cfg.Stack.WithFiles(files...).Run(ctx, "up", "-d", "--no-deps", serviceAccelerated); err != nil || !wait {
		return err
	}
	for _, s := range []string{serviceAccelerated, serviceMaterialized} {
		if _, err := r.waitReady(ctx, r.urls(s), time.Now(), nil); err != nil {
			return fmt.Errorf("after switching runtime 1 to mode %s: %w", mode, err)
		}
	}
	return nil
}

// measure restarts a target (with do; nil when the stack already started it)
// and records the restart.
func (r *RestartRunner) measure(ctx context.Context, orders int64, target, kind string, round int, do func(context.Context) error) {
	res := RestartResult{Orders: orders, Target: target, Kind: kind, Round: round}
	if err := r.restart(ctx, &res, do); err != nil {
		res.Err = err.Error()
	}
	r.rep.Results = append(r.rep.Results, res)
	r.printf("restart %-12s %-5s #%d at %s orders: %s\n", target, kind, round, count(orders), render("restart-line", res))
}

// restart restarts res's target and measures how long it took to be ready
// and caught up, its peak memory, and what its log says of the start.
func (r *RestartRunner) restart(ctx context.Context, res *RestartResult, do func(context.Context) error) error {
	rt, urls := runtimeOf(res.Target), r.urls(res.Target)
	if res.Target == RestartMemory {
		start := time.Now()
		if err := r.cfg.DB.Exec(ctx, "COPY orders TO '/dev/null'"); err != nil {
			r.printf("warning: COPY orders: %v\n", err)
		} else {
			res.CopyTook = time.Since(start)
		}
	}
	if do != nil {
		if err := do(ctx); err != nil {
			return err
		}
	}
	pid, started, err := r.cfg.Stack.Process(ctx, rt.service)
	if err != nil {
		return err
	}
	lsn, err := r.cfg.DB.Int(ctx, "SELECT (pg_current_wal_lsn() - '0/0')::bigint")
	if err != nil {
		return fmt.Errorf("read pg_current_wal_lsn(): %w", err)
	}
	var sampled int64
	sample := func() {
		if b, err := scrapeValue(ctx, r.client.HTTP, urls.Metrics, MetricRSS, "", ""); err == nil {
			sampled = max(sampled, int64(b))
		}
	}
	if peakRSS(pid) > 0 {
		sample = nil
	}
	readyAt, err := r.waitReady(ctx, urls, started, sample)
	if err != nil {
		return err
	}
	res.Ready = readyAt.Sub(started)
	if Poll(ctx, r.cfg.CatchUpTimeout, restartPoll, rt.dataset+"'s watermark", func() bool {
		v, err := scrapeValue(ctx, r.client.HTTP, urls.Metrics, MetricWatermark, "dataset", rt.dataset)
		return err == nil && int64(v) >= lsn
	}) == nil {
		res.CaughtUp = time.Since(started)
	}
	res.PeakRSS, res.RSSSource = peakRSS(pid), "VmHWM"
	if res.PeakRSS == 0 {
		res.PeakRSS, res.RSSSource = sampled, "highest "+MetricRSS+" sampled"
	}
	// The feed logs "snapshot taken" just after the commit that moved the
	// watermark: give the line a moment to be written. The log is read since
	// this start only: the engine stamps both, and an earlier start's lines
	// would lend this one their snapshot.
	sleepUntil(ctx, time.Now().Add(500*time.Millisecond))
	if logs, err := r.cfg.Stack.Logs(ctx, rt.service, started); err == nil {
		res.Log = ParseStartLog(logs)
		res.FirstLog, res.Listening = since(started, res.Log.FirstLine), since(started, res.Log.Started)
	}
	return nil
}

// since is t - start, or zero when t is.
func since(start, t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return t.Sub(start)
}

// waitReady polls /v1/ready until it answers 200, calling sample between polls.
func (r *RestartRunner) waitReady(ctx context.Context, urls RuntimeEndpoint, since time.Time, sample func()) (time.Time, error) {
	err := Poll(ctx, time.Until(since.Add(r.cfg.ReadyTimeout)), restartPoll, urls.URL+"/v1/ready to answer 200", func() bool {
		status, _, _ := r.client.Do(ctx, http.MethodGet, urls.URL+"/v1/ready", nil, "")
		if status != http.StatusOK && sample != nil {
			sample()
		}
		return status == http.StatusOK
	})
	return time.Now(), err
}

// sizeCopy is the median COPY of the restarts at one size.
func sizeCopy(results []RestartResult, orders int64) CopyTiming {
	var took []time.Duration
	for _, r := range results {
		if r.Orders == orders && r.CopyTook > 0 {
			took = append(took, r.CopyTook)
		}
	}
	t := CopyTiming{Orders: orders, Runs: len(took)}
	t.Took, _ = medianMax(took)
	return t
}

// startWrites inserts single orders at WriteRate until the returned func is called.
func (r *RestartRunner) startWrites(ctx context.Context) (stop func()) {
	if r.cfg.Writes == nil || r.cfg.WriteRate <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		every := time.Duration(float64(time.Second) / r.cfg.WriteRate)
		for next := time.Now(); sleepUntil(ctx, next); next = next.Add(every) {
			if err := r.cfg.Writes.Exec(ctx, seedSQL(1)); err != nil && ctx.Err() == nil {
				r.printf("warning: write during restarts: %v\n", err)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// restarted is a runtime the benchmark restarts: its compose service and the
// dataset whose watermark says it caught up.
type restarted struct{ service, dataset string }

// runtimeOf is the runtime of a target or service.
func runtimeOf(name string) restarted {
	if name == RestartMaterialized || name == serviceMaterialized {
		return restarted{serviceMaterialized, "rankings"}
	}
	return restarted{serviceAccelerated, "orders"}
}

func (r *RestartRunner) urls(name string) RuntimeEndpoint {
	if runtimeOf(name).service == serviceMaterialized {
		return r.cfg.Materialized
	}
	return r.cfg.Accelerated
}

// stop stops a service: SIGTERM and its grace period, or SIGKILL when crash;
// it returns once the container is no longer running, or its restart policy
// started it again (then Start has nothing to do).
func (r *RestartRunner) stop(ctx context.Context, service string, crash bool) error {
	if !crash {
		return r.cfg.Stack.Stop(ctx, service)
	}
	if err := r.cfg.Stack.Signal(ctx, service, "KILL"); err != nil {
		return err
	}
	return r.cfg.Stack.WaitStopped(ctx, service, time.Minute)
}
