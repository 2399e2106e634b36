package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

const writesUsage = `bench writes: open-loop writes (POST /orders through the api) at each rate of
--rates, for the command side alone (the runtimes paused or stopped) and the
whole chain, interleaved per rate; then a ramp that narrows the highest rate each
sustains (make bench-writes). Per rate and configuration: the rate achieved,
POST p50/p99, write-to-visible per runtime from their watermarks, CPU and RSS
per process (the load generator's too) and the runtimes' catch-up; the write path's goals
next to them. Writes bench/results/writes-latest.md (and .svg, .json).

  go run ./cmd/bench writes --rates 100,500 --step 10s --refine 0   # a smoke run

flags:
`

// writesOptions are the parsed flags of bench writes.
type writesOptions struct {
	Config      bench.WritesConfig
	OutDir      string
	PostgresURL string
}

// writes is `bench writes`.
func writes(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseWritesFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench writes: %v\n", err)
		return 2
	}
	o.Config.Command = commandLine(append([]string{"writes"}, args...))
	r := bench.NewWritesRunner(o.Config)
	r.Out = stdout
	rep, err := r.Run(ctx)
	if rep != nil && len(rep.Steps) > 0 {
		if n := ordersNote(ctx, o.PostgresURL); n != "" {
			rep.Notes = append(rep.Notes, n)
		}
		if err != nil {
			rep.Notes = append(rep.Notes, "the run ended early: "+err.Error())
		}
		if werr := writeWrites(o.OutDir, rep, stdout); werr != nil {
			fmt.Fprintf(stderr, "bench writes: %v\n", werr)
			return 1
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench writes: %v\n", err)
		return 1
	}
	return 0
}

func parseWritesFlags(args []string, stderr io.Writer) (writesOptions, error) {
	var o writesOptions
	c := &o.Config
	fs := flag.NewFlagSet("bench writes", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, writesUsage); fs.PrintDefaults() }
	rates := &floatList{}
	fs.StringVar(&c.BaseURL, "url", DefaultURL, "base URL of the api")
	fs.Var(rates, "rates", "comma-separated rates in orders/s (default 100,250,500,1000,2000)")
	fs.DurationVar(&c.Step, "step", bench.DefaultWriteStep, "length of each step (one configuration at one rate)")
	refine := fs.Int("refine", bench.DefaultRefine, "ramp: steps per configuration after the list, to narrow its sustained rate (0: none)")
	fs.DurationVar(&c.Settle, "settle", bench.DefaultSettle, "pause before each step")
	fs.IntVar(&c.MaxInFlight, "max-inflight", bench.DefaultWritesInFlight, "most writes outstanding")
	fs.Float64Var(&c.TraceRate, "trace-rate", bench.DefaultTraceRate, "writes per second traced on each runtime's watermark")
	fs.IntVar(&c.TraceConcurrency, "trace-concurrency", bench.DefaultTraceConcurrency, "most watermark reads in flight per runtime")
	mode := fs.String("command-side", bench.RuntimesPause, "how the runtimes are switched off for the command side: pause (docker pause; the slot keeps the backlog) or stop (docker stop; a restart takes a fresh snapshot)")
	fs.DurationVar(&c.CatchUpTimeout, "catch-up-timeout", bench.DefaultCatchUpTimeout, "longest wait for both runtimes to cover the last write")
	fs.DurationVar(&c.Timeout, "timeout", bench.DefaultTimeout, "timeout of each request")
	fs.StringVar(&c.Accelerated.URL, "accelerated-runtime", "", "runtime 1's HTTP API (http://host:8090) for its orders watermark; key from $ACCELERATED_API_KEY (required)")
	fs.StringVar(&c.Materialized.URL, "materialized-runtime", "", "runtime 2's HTTP API for its rankings watermark; key from $MATERIALIZED_API_KEY (required)")
	accMetrics := fs.String("accelerated-metrics", "", "runtime 1's Prometheus URL for its CPU and memory")
	matMetrics := fs.String("materialized-metrics", "", "runtime 2's Prometheus URL for its CPU and memory")
	apiMetrics := fs.String("api-metrics", "", "the api's Prometheus URL (default: --url + /metrics)")
	pgCPU := fs.String("postgres-cpu-container", "", "Postgres container whose cgroup CPU is read (default: compose service postgres of --project)")
	fs.StringVar(&c.Project, "project", envOr("COMPOSE_PROJECT_NAME", "cqrs"), "Compose project of the stack: its runtimes are switched, its containers read")
	fs.StringVar(&c.Docker, "docker", "docker", "docker CLI")
	fs.StringVar(&o.PostgresURL, "postgres-url", "", "Postgres to count the orders in, for the report (default: not counted)")
	fs.StringVar(&o.OutDir, "out", DefaultOutDir, "directory of the results")
	fs.Func("note", "a note for the report, e.g. what else the machine was doing (repeatable)", func(s string) error {
		c.Notes = append(c.Notes, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q; flags only, see --help", fs.Arg(0))
	}
	switch {
	case c.Accelerated.URL == "" || c.Materialized.URL == "":
		return o, errors.New("--accelerated-runtime and --materialized-runtime are required (make bench-writes sets them)")
	case *mode != bench.RuntimesPause && *mode != bench.RuntimesStop:
		return o, fmt.Errorf("--command-side %q: want pause or stop", *mode)
	case c.Step <= 0 || *refine < 0 || c.TraceRate <= 0:
		return o, errors.New("--step and --trace-rate must be > 0, --refine >= 0")
	}
	if _, err := exec.LookPath(c.Docker); err != nil {
		return o, fmt.Errorf("--docker %q: %w (the runtimes are switched off with it)", c.Docker, err)
	}
	c.Rates, c.Refine = rates.v, *refine
	if c.Refine == 0 {
		c.Refine = -1 // none, for the runner
	}
	c.Accelerated.APIKey, c.Materialized.APIKey = os.Getenv("ACCELERATED_API_KEY"), os.Getenv("MATERIALIZED_API_KEY")
	c.Runtimes = &bench.DockerRuntimes{Docker: c.Docker, Project: c.Project, Services: []string{"accelerated", "materialized"}, Mode: *mode}
	if *apiMetrics == "" {
		*apiMetrics = strings.TrimRight(c.BaseURL, "/") + "/metrics"
	}
	c.CPU = []bench.CPUSource{
		{Process: bench.ProcAPI, MetricsURL: *apiMetrics},
		{Process: bench.ProcPostgres, Container: *pgCPU, Service: "postgres"},
		{Process: bench.ProcAccelerated, MetricsURL: *accMetrics, Service: "accelerated"},
		{Process: bench.ProcMaterialized, MetricsURL: *matMetrics, Service: "materialized"},
	}
	c.Memory = []bench.MemorySource{
		{Runtime: bench.ProcAPI, MetricsURL: *apiMetrics, Service: "api", Project: c.Project},
		{Runtime: bench.ProcPostgres, Container: *pgCPU, Service: "postgres", Project: c.Project},
		{Runtime: bench.ProcAccelerated, MetricsURL: *accMetrics, Service: "accelerated", Project: c.Project},
		{Runtime: bench.ProcMaterialized, MetricsURL: *matMetrics, Service: "materialized", Project: c.Project},
	}
	return o, nil
}

// ordersNote names the orders in the table at the end of the run, when
// Postgres can be reached.
func ordersNote(ctx context.Context, url string) string {
	if url == "" {
		return ""
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pg, err := bench.OpenPostgres(cctx, url)
	if err != nil {
		return ""
	}
	defer func() { _ = pg.Close(cctx) }()
	n, err := bench.NewSeeder(pg).Count(cctx)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("orders in the table at the end of the run: %d", n)
}

// writeWrites prints the report and stores it as writes-latest.md, .svg and
// .json under dir.
func writeWrites(dir string, rep *bench.WritesReport, stdout io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	md := bench.WritesMarkdown(rep)
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	for name, data := range map[string][]byte{
		"writes-latest.md": []byte(md), "writes-latest.svg": []byte(bench.WritesSVG(rep)), "writes-latest.json": append(js, '\n'),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
	}
	fmt.Fprintf(stdout, "\n%s\nresults: %s\n", md, filepath.Join(dir, "writes-latest.md"))
	return nil
}
