package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// Defaults of the flags that are not the bench package's.
const (
	DefaultURL = "http://localhost:9999"
	// DefaultPostgresURL has no password: pgx takes it from $PGPASSWORD (the
	// Makefile's bench targets set it from secrets.env).
	DefaultPostgresURL = "postgres://postgres@localhost:5432/postgres?sslmode=disable"
	DefaultOutDir      = "bench/results"
)

// Options are the parsed flags.
type Options struct {
	Config            bench.Config
	OutDir            string
	PostgresURL       string
	PostgresContainer string
	Docs              string // page with a generated:bench block; empty: none
}

const usage = `bench measures the recipe's api: every scenario in one run, interleaved, under
writes, with freshness per hop, optionally at several data sizes.

usage: bench [flags]

  go run ./cmd/bench --quick                          # about a minute, current data
  go run ./cmd/bench -z 10s --scale 10k,100k,1M       # the full run (make bench)

Exit status: 0 when it measured (goals missed or not), 1 when the api is
unreachable or the tool failed, 2 on bad flags.

flags:
`

// parseFlags reads args; --quick changes the defaults of the flags not given.
func parseFlags(args []string, stderr io.Writer) (Options, error) {
	var o Options
	c := &o.Config
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	rates, scale := &floatList{}, &countList{}
	quick := fs.Bool("quick", false, "smoke run of about a minute: -z 3s -c 50 --rounds 3 --warmup 1s --changes-window 3s --freshness-window 5s --grace 3s --duration 2s --sync-timeout 30s, current data only; flags given explicitly win")
	fs.StringVar(&c.BaseURL, "url", DefaultURL, "base URL of the api")
	fs.IntVar(&c.Requests, "n", bench.DefaultRequests, "closed loop: requests per scenario (as oha -n)")
	fs.DurationVar(&c.Duration, "z", 0, "closed loop: time per scenario instead of -n (as oha -z)")
	fs.IntVar(&c.Concurrency, "c", bench.DefaultConcurrency, "closed loop: connections (as oha -c)")
	fs.IntVar(&c.Rounds, "rounds", bench.DefaultRounds, "rounds the scenarios are interleaved in")
	fs.DurationVar(&c.Warmup, "warmup", bench.DefaultWarmup, "closed-loop warm-up per scenario, before measuring (0: none)")
	fs.Var(rates, "rate", "open loop: comma-separated rates in req/s, e.g. 200,1000 (default: none)")
	fs.DurationVar(&c.OpenDuration, "duration", bench.DefaultOpenDuration, "open loop: time per scenario and rate")
	fs.IntVar(&c.MaxInFlight, "max-inflight", bench.DefaultMaxInFlight, "open loop: most requests outstanding")
	fs.Float64Var(&c.WriteRate, "write-rate", bench.DefaultWriteRate, "POST /orders per second during the run (0: no writes, no freshness)")
	fs.IntVar(&c.FreshnessSample, "freshness-sample", bench.DefaultFreshnessSample, "freshness: trace every n-th write through the hops (1: every write)")
	fs.IntVar(&c.FreshnessConcurrency, "freshness-concurrency", bench.DefaultFreshnessConcurrency, "freshness: most reads in flight per hop (each write is read once per hop with Spice-Min-Position)")
	fs.DurationVar(&c.FreshnessWindow, "freshness-window", bench.DefaultFreshnessWindow, "freshness: writes and their reads only, before the rounds (0: none)")
	fs.DurationVar(&c.Grace, "grace", bench.DefaultGrace, "freshness: longest wait after the last write for the reads still in flight")
	fs.Var(scale, "scale", "comma-separated order counts to seed and measure at, ascending, e.g. 10k,100k,1M (default: current data, no seeding)")
	fs.IntVar(&c.SeedChunk, "seed-chunk", bench.DefaultSeedChunk, "orders per seeding statement")
	fs.DurationVar(&c.SyncTimeout, "sync-timeout", bench.DefaultSyncTimeout, "longest wait for both runtimes to reflect the data before measuring")
	fs.DurationVar(&c.Timeout, "timeout", bench.DefaultTimeout, "timeout of each request")
	fs.StringVar(&o.PostgresURL, "postgres-url", DefaultPostgresURL, "Postgres to seed and count orders in; a URL without a password takes $PGPASSWORD")
	fs.StringVar(&o.PostgresContainer, "postgres-container", "", "Postgres container to seed through with docker exec psql, instead of --postgres-url (for a stack that does not publish 5432)")
	fs.StringVar(&c.AcceleratedHTTP, "accelerated-http", "", "runtime 1's HTTP API (e.g. http://localhost:8090), read as an extra hop (default: skip)")
	fs.StringVar(&c.MaterializedHTTP, "materialized-http", "", "runtime 2's HTTP API, read as an extra hop (default: skip)")
	accMetrics := fs.String("accelerated-metrics", "", "runtime 1's Prometheus URL (http://host:9090/metrics) for its memory and CPU")
	matMetrics := fs.String("materialized-metrics", "", "runtime 2's Prometheus URL for its memory and CPU")
	accContainer := fs.String("accelerated-container", "", "runtime 1's container for docker stats (default: compose service accelerated)")
	matContainer := fs.String("materialized-container", "", "runtime 2's container for docker stats (default: compose service materialized)")
	apiMetrics := fs.String("api-metrics", "", "the api's Prometheus URL for its CPU (default: --url + /metrics; \"none\": skip)")
	pgCPU := fs.String("postgres-cpu-container", "", "Postgres container whose cgroup CPU is read with docker exec (default: compose service postgres of --project; \"none\": skip)")
	fs.StringVar(&c.Project, "project", envOr("COMPOSE_PROJECT_NAME", "cqrs"), "Compose project of the stack, to find its containers")
	fs.DurationVar(&c.ChangesWindow, "changes-window", bench.DefaultChangesWindow, "writes only (no reads, no polling) for this long before the freshness window: CPU per change (0: none)")
	fs.StringVar(&c.AcceleratedRuntime.URL, "accelerated-runtime", "", "runtime 1's HTTP API (http://host:8090) for its orders watermark during the freshness window; key from $ACCELERATED_API_KEY (default: skip)")
	fs.StringVar(&c.MaterializedRuntime.URL, "materialized-runtime", "", "runtime 2's HTTP API for its rankings watermark; key from $MATERIALIZED_API_KEY (default: skip)")
	fs.IntVar(&c.WatermarkSample, "watermark-sample", bench.DefaultWatermarkSample, "freshness window: read every n-th write on the watermark hops")
	fs.StringVar(&c.Docker, "docker", "docker", "docker CLI for memory and versions (empty: none)")
	fs.StringVar(&o.OutDir, "out", DefaultOutDir, "directory of the results")
	fs.StringVar(&o.Docs, "docs", DefaultDocs, "docs page whose generated:bench block gets the run's summary, unless --quick (empty: none)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q; flags only, see --help", fs.Arg(0))
	}
	c.Rates, c.Scale, c.Quick = rates.v, scale.v, *quick
	c.Memory = []bench.MemorySource{
		{Runtime: bench.HopAccelerated, MetricsURL: *accMetrics, Container: *accContainer, Service: "accelerated"},
		{Runtime: bench.HopMaterialized, MetricsURL: *matMetrics, Container: *matContainer, Service: "materialized"},
	}
	c.AcceleratedRuntime.APIKey, c.MaterializedRuntime.APIKey = os.Getenv("ACCELERATED_API_KEY"), os.Getenv("MATERIALIZED_API_KEY")
	if *apiMetrics == "" {
		*apiMetrics = strings.TrimRight(c.BaseURL, "/") + "/metrics"
	}
	for _, src := range []bench.CPUSource{
		{Process: bench.ProcAPI, MetricsURL: *apiMetrics},
		{Process: bench.ProcAccelerated, MetricsURL: *accMetrics},
		{Process: bench.ProcMaterialized, MetricsURL: *matMetrics},
		{Process: bench.ProcPostgres, Container: *pgCPU, Service: "postgres"},
	} {
		if src.MetricsURL == "none" || src.Container == "none" || (src.MetricsURL == "" && src.Service == "") {
			continue
		}
		c.CPU = append(c.CPU, src)
	}
	if *quick {
		applyQuick(fs, c)
	}
	return o, validate(c)
}

// applyQuick sets the quick run's values of the flags that were not given.
func applyQuick(fs *flag.FlagSet, c *bench.Config) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	quick := []struct {
		name  string
		apply func()
	}{
		{"z", func() {
			if !set["n"] {
				c.Duration = 3 * time.Second
			}
		}},
		{"c", func() { c.Concurrency = 50 }},
		{"rounds", func() { c.Rounds = 3 }},
		{"warmup", func() { c.Warmup = time.Second }},
		{"duration", func() { c.OpenDuration = 2 * time.Second }},
		{"freshness-window", func() { c.FreshnessWindow = 5 * time.Second }},
		{"grace", func() { c.Grace = 3 * time.Second }},
		{"sync-timeout", func() { c.SyncTimeout = 30 * time.Second }},
		{"changes-window", func() { c.ChangesWindow = 3 * time.Second }},
		{"scale", func() { c.Scale = nil }},
	}
	for _, q := range quick {
		if !set[q.name] {
			q.apply()
		}
	}
}

func validate(c *bench.Config) error {
	switch {
	case c.Requests < 0, c.Concurrency <= 0, c.Rounds <= 0, c.FreshnessConcurrency <= 0, c.FreshnessSample <= 0, c.WatermarkSample <= 0:
		return errors.New("-n must be >= 0; -c, --rounds, --freshness-concurrency, --freshness-sample and --watermark-sample > 0")
	case c.WriteRate < 0:
		return errors.New("--write-rate must be >= 0")
	case !slices.IsSorted(c.Scale):
		return fmt.Errorf("--scale %v must be ascending: orders are only ever added", c.Scale)
	}
	// Zero means "none" for these flags, negative for the runner.
	if c.Warmup == 0 {
		c.Warmup = -1
	}
	if c.FreshnessWindow == 0 {
		c.FreshnessWindow = -1
	}
	if c.ChangesWindow == 0 {
		c.ChangesWindow = -1
	}
	return nil
}

// floatList is a comma-separated list of positive numbers.
type floatList struct{ v []float64 }

func (l *floatList) String() string { return fmt.Sprint(l.v) }

func (l *floatList) Set(s string) error {
	for part := range strings.SplitSeq(s, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || f <= 0 {
			return fmt.Errorf("%q is not a positive rate", part)
		}
		l.v = append(l.v, f)
	}
	return nil
}

// countList is a comma-separated list of counts, with optional k and M suffixes.
type countList struct{ v []int64 }

func (l *countList) String() string { return fmt.Sprint(l.v) }

func (l *countList) Set(s string) error {
	for part := range strings.SplitSeq(s, ",") {
		n, err := parseCount(strings.TrimSpace(part))
		if err != nil {
			return err
		}
		l.v = append(l.v, n)
	}
	return nil
}

func parseCount(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1_000, s[:len(s)-1]
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		mult, s = 1_000_000, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive count like 100000 or 100k", s)
	}
	return n * mult, nil
}
