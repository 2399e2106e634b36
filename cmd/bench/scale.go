package main

import (
	"context"
	"encoding/json"
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
	cfg   bench.Config
	rates floatList
	scale countList
	quick bool
}

// scaleFlags is the flag set of bench without a subcommand.
func scaleFlags(o *scaleOptions) *flag.FlagSet {
	c := &o.cfg
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	o.apiFlags(fs)
	fs.BoolVar(&o.quick, "quick", false, "smoke run of about a minute: -z 3s -c 50 --rounds 3 --warmup 1s --changes-window 3s --freshness-window 5s --grace 3s --duration 2s --sync-timeout 30s, current data only; flags given explicitly win")
	fs.IntVar(&c.Requests, "n", bench.DefaultRequests, "closed loop: requests per scenario (as oha -n)")
	fs.DurationVar(&c.Duration, "z", 0, "closed loop: time per scenario instead of -n (as oha -z)")
	fs.IntVar(&c.Concurrency, "c", bench.DefaultConcurrency, "closed loop: connections (as oha -c)")
	fs.IntVar(&c.Rounds, "rounds", bench.DefaultRounds, "rounds the scenarios are interleaved in")
	fs.DurationVar(&c.Warmup, "warmup", bench.DefaultWarmup, "closed-loop warm-up per scenario, before measuring (0: none)")
	fs.Var(&o.rates, "rate", "open loop: comma-separated rates in req/s, e.g. 200,1000 (default: none)")
	fs.DurationVar(&c.OpenDuration, "duration", bench.DefaultOpenDuration, "open loop: time per scenario and rate")
	fs.IntVar(&c.MaxInFlight, "max-inflight", bench.DefaultMaxInFlight, "open loop: most requests outstanding")
	fs.Float64Var(&c.WriteRate, "write-rate", bench.DefaultWriteRate, "POST /orders per second during the run (0: no writes, no freshness)")
	fs.IntVar(&c.FreshnessSample, "freshness-sample", bench.DefaultFreshnessSample, "freshness: trace every n-th write through the hops (1: every write)")
	fs.IntVar(&c.FreshnessConcurrency, "freshness-concurrency", bench.DefaultFreshnessConcurrency, "freshness: most reads in flight per hop")
	fs.DurationVar(&c.FreshnessWindow, "freshness-window", bench.DefaultFreshnessWindow, "freshness: writes and their reads only, before the rounds (0: none)")
	fs.DurationVar(&c.Grace, "grace", bench.DefaultGrace, "freshness: longest wait after the last write for the reads still in flight")
	fs.Var(&o.scale, "scale", "comma-separated order counts to seed and measure at, ascending, e.g. 10k,100k,1M (default: current data, no seeding)")
	fs.IntVar(&c.SeedChunk, "seed-chunk", bench.DefaultSeedChunk, "orders per seeding statement")
	fs.DurationVar(&c.SyncTimeout, "sync-timeout", bench.DefaultSyncTimeout, "longest wait for both runtimes to reflect the data before measuring")
	fs.DurationVar(&c.Timeout, "timeout", bench.DefaultTimeout, "timeout of each request")
	fs.DurationVar(&c.ChangesWindow, "changes-window", bench.DefaultChangesWindow, "writes only (no reads) for this long before the freshness window: CPU per change (0: none)")
	fs.IntVar(&c.WatermarkSample, "watermark-sample", bench.DefaultWatermarkSample, "freshness window: read every n-th write on the watermark hops")
	fs.StringVar(&c.AcceleratedHTTP, "accelerated-http", "", "runtime 1's HTTP API, read as an extra hop (default: skip)")
	fs.StringVar(&c.MaterializedHTTP, "materialized-http", "", "runtime 2's HTTP API, read as an extra hop (default: skip)")
	o.postgresFlag(fs, DefaultPostgresURL, "Postgres to seed and count orders in")
	o.runtimeFlags(fs)
	o.resultFlags(fs, "docs page whose generated:bench block gets the run's summary, unless --quick")
	return fs
}

// resolve applies --quick to the flags not given and checks the rest.
func (o *scaleOptions) resolve(fs *flag.FlagSet) error {
	c := &o.cfg
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.quick {
		for name, apply := range map[string]func(){
			"z": func() {
				if !set["n"] {
					c.Duration = 3 * time.Second
				}
			},
			"c": func() { c.Concurrency = 50 }, "rounds": func() { c.Rounds = 3 }, "warmup": func() { c.Warmup = time.Second },
			"duration": func() { c.OpenDuration = 2 * time.Second }, "freshness-window": func() { c.FreshnessWindow = 5 * time.Second },
			"grace": func() { c.Grace = 3 * time.Second }, "sync-timeout": func() { c.SyncTimeout = 30 * time.Second },
			"changes-window": func() { c.ChangesWindow = 3 * time.Second }, "scale": func() { o.scale = nil },
		} {
			if !set[name] {
				apply()
			}
		}
	}
	c.BaseURL, c.Rates, c.Scale, c.Quick = o.url, o.rates, o.scale, o.quick
	switch {
	case c.Requests < 0, c.Concurrency <= 0, c.Rounds <= 0, c.FreshnessConcurrency <= 0, c.FreshnessSample <= 0, c.WatermarkSample <= 0:
		return fmt.Errorf("%w: -n must be >= 0; -c, --rounds, --freshness-concurrency, --freshness-sample and --watermark-sample > 0", errUsage)
	case c.WriteRate < 0:
		return fmt.Errorf("%w: --write-rate must be >= 0", errUsage)
	case !slices.IsSorted(c.Scale):
		return fmt.Errorf("%w: --scale %v must be ascending: orders are only ever added", errUsage, c.Scale)
	}
	// Zero means none for these flags, negative for the runner.
	for _, d := range []*time.Duration{&c.Warmup, &c.FreshnessWindow, &c.ChangesWindow} {
		if *d == 0 {
			*d = -1
		}
	}
	c.AcceleratedRuntime, c.MaterializedRuntime = o.endpoint(o.accRuntime, "ACCELERATED_API_KEY"), o.endpoint(o.matRuntime, "MATERIALIZED_API_KEY")
	c.Stack, c.Processes = o.stack(), o.processes()
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
	pg, err := o.openPostgres(ctx)
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
	md := bench.Markdown(rep)
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	stamp := rep.Started.UTC().Format("20060102T150405Z")
	for _, s := range rep.Sizes {
		for _, g := range bench.Goals(s, rep.Settings.Concurrency) {
			fmt.Fprintf(stdout, "  %-4s  %-58s %s\n", g.Status, g.Goal, g.Got)
		}
	}
	if err := save(o.out, map[string]string{stamp + ".md": md, stamp + ".json": string(js) + "\n", "latest.md": md}, stdout); err != nil {
		return err
	}
	if !rep.Settings.Quick {
		updateDocs(o.docs, "bench", bench.DocsSummary(rep), rep.Started, stdout)
	}
	return nil
}
