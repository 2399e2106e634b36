package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// scaleOptions are bench's own flags: the scale run.
type scaleOptions struct {
	stackOptions
	cfg bench.Config
}

// scaleFlags is the flag set of bench without a subcommand.
func scaleFlags(o *scaleOptions) *flag.FlagSet {
	c := &o.cfg
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	o.urlFlag(fs)
	o.projectFlag(fs)
	fs.BoolVar(&c.Quick, "quick", false, "smoke run of about a minute: -z 3s -c 50 --rounds 3 --warmup 1s --changes-window 3s --freshness-window 5s --grace 3s --duration 2s --sync-timeout 30s, current data only; flags given explicitly win")
	fs.IntVar(&c.Requests, "n", bench.DefaultRequests, "closed loop: requests per scenario (as oha -n)")
	fs.DurationVar(&c.Duration, "z", 0, "closed loop: time per scenario instead of -n (as oha -z)")
	fs.IntVar(&c.Concurrency, "c", bench.DefaultConcurrency, "closed loop: connections (as oha -c)")
	fs.IntVar(&c.Rounds, "rounds", bench.DefaultRounds, "rounds the scenarios are interleaved in")
	fs.DurationVar(&c.Warmup, "warmup", bench.DefaultWarmup, "closed-loop warm-up per scenario, before measuring (0: none)")
	fs.Var(rates(&c.Rates), "rate", "open loop: comma-separated rates in req/s, e.g. 200,1000 (default: none)")
	fs.DurationVar(&c.OpenDuration, "duration", bench.DefaultOpenDuration, "open loop: time per scenario and rate")
	fs.IntVar(&c.MaxInFlight, "max-inflight", bench.DefaultMaxInFlight, "open loop: most requests outstanding")
	fs.Float64Var(&c.WriteRate, "write-rate", bench.DefaultWriteRate, "POST /orders per second during the run (0: no writes, no freshness)")
	fs.IntVar(&c.FreshnessSample, "freshness-sample", bench.DefaultFreshnessSample, "freshness: trace every n-th write through the hops (1: every write)")
	fs.IntVar(&c.FreshnessConcurrency, "freshness-concurrency", bench.DefaultFreshnessConcurrency, "freshness: most reads in flight per hop")
	fs.DurationVar(&c.FreshnessWindow, "freshness-window", bench.DefaultFreshnessWindow, "freshness: writes and their reads only, before the rounds (0: none)")
	fs.DurationVar(&c.Grace, "grace", bench.DefaultGrace, "freshness: longest wait after the last write for the reads still in flight")
	fs.BoolVar(&c.RuntimeHops, "runtime-hops", false, "freshness: also read the ranking on each runtime's HTTP API (--accelerated-runtime, --materialized-runtime), without the api")
	fs.Var(counts(&c.Scale), "scale", "comma-separated order counts to seed and measure at, ascending, e.g. 10k,100k,1M (default: current data, no seeding)")
	fs.DurationVar(&c.SyncTimeout, "sync-timeout", bench.DefaultSyncTimeout, "longest wait for both runtimes to reflect the data before measuring")
	fs.DurationVar(&c.Timeout, "timeout", bench.DefaultTimeout, "timeout of each request")
	fs.DurationVar(&c.ChangesWindow, "changes-window", bench.DefaultChangesWindow, "writes only (no reads) for this long before the freshness window: CPU per change (0: none)")
	o.postgresFlag(fs, "Postgres to seed and count orders in")
	o.runtimeFlags(fs, "", "", "", "")
	fs.StringVar(&o.apiMetrics, "api-metrics", "", "the api's Prometheus URL for its memory (default: --url + /metrics; \"none\": skip)")
	o.resultFlags(fs, "bench", "the run's summary, unless --quick")
	return fs
}

// resolve applies --quick to the flags not given and checks the rest.
func (o *scaleOptions) resolve(fs *flag.FlagSet) error {
	c := &o.cfg
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	quick := []struct {
		flag string
		do   func()
	}{
		{"z", func() { c.Duration = 3 * time.Second }}, {"c", func() { c.Concurrency = 50 }}, {"rounds", func() { c.Rounds = 3 }},
		{"warmup", func() { c.Warmup = time.Second }}, {"duration", func() { c.OpenDuration = 2 * time.Second }},
		{"freshness-window", func() { c.FreshnessWindow = 5 * time.Second }}, {"grace", func() { c.Grace = 3 * time.Second }},
		{"sync-timeout", func() { c.SyncTimeout = 30 * time.Second }}, {"changes-window", func() { c.ChangesWindow = 3 * time.Second }},
		{"scale", func() { c.Scale = nil }},
	}
	for _, q := range quick {
		if c.Quick && !set[q.flag] && (q.flag != "z" || !set["n"]) {
			q.do()
		}
	}
	switch {
	case c.Requests < 0, c.Concurrency <= 0, c.Rounds <= 0, c.FreshnessConcurrency <= 0, c.FreshnessSample <= 0:
		return fmt.Errorf("%w: -n must be >= 0; -c, --rounds, --freshness-concurrency and --freshness-sample > 0", errUsage)
	case c.WriteRate < 0:
		return fmt.Errorf("%w: --write-rate must be >= 0", errUsage)
	case !slices.IsSorted(c.Scale):
		return fmt.Errorf("%w: --scale %v must be ascending: orders are only ever added", errUsage, c.Scale)
	}
	c.BaseURL, c.Stack, c.Processes = o.url, o.stack(), o.processes()
	c.Accelerated, c.Materialized = o.runtimes()
	return nil
}

// runScale measures and writes the results; it fails when the api is
// unreachable, seeding fails or the results cannot be written; never because
// a goal was missed.
func runScale(ctx context.Context, fs *flag.FlagSet, o *scaleOptions, line string, stdout io.Writer) error {
	if err := o.resolve(fs); err != nil {
		return err
	}
	cfg := o.cfg
	cfg.Command = line
	defer cfg.Stack.Close()
	pg, err := o.openPostgres(ctx, stdout)
	if err != nil && len(cfg.Scale) > 0 {
		return err
	}
	if pg != nil {
		defer pg.Close(context.WithoutCancel(ctx))
		cfg.DB = pg
	}
	r := bench.NewRunner(cfg)
	r.Out = stdout
	rep, err := r.Run(ctx)
	if err != nil {
		return err
	}
	if pg == nil {
		rep.Notes = append(rep.Notes, "orders not counted: Postgres was not reachable at --postgres-url")
	}
	for _, s := range rep.Sizes {
		for _, g := range s.Goals {
			fmt.Fprintf(stdout, "  %-4s  %-58s %s\n", g.Status, g.Goal, g.Got)
		}
	}
	block := "bench"
	if cfg.Quick {
		block = ""
	}
	return o.publish(stdout, bench.Markdown(rep), rep, []string{stamp(rep.Started), "latest"}, block, bench.DocsSummary(rep), rep.Started)
}
