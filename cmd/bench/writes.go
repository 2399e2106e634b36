package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// writesOptions are the flags of bench writes.
type writesOptions struct {
	stackOptions
	cfg  bench.WritesConfig
	mode string
}

// writesFlags is the flag set of bench writes.
func writesFlags(o *writesOptions) *flag.FlagSet {
	c := &o.cfg
	fs := flag.NewFlagSet("bench writes", flag.ContinueOnError)
	o.urlFlag(fs)
	o.projectFlag(fs)
	c.Rates = bench.DefaultWriteRates
	fs.Var(rates(&c.Rates), "rates", "comma-separated rates in orders/s; 100 is the quiet rate, 1000 the goals'")
	fs.DurationVar(&c.Step, "step", bench.DefaultWriteStep, "length of each step (one configuration at one rate)")
	fs.IntVar(&c.Rounds, "rounds", bench.DefaultWriteRounds, "rounds of every rate, each configuration once per rate and round")
	fs.IntVar(&c.Refine, "refine", bench.DefaultRefine, "ramp: steps per configuration after the rounds, to narrow its sustained rate (0: none)")
	fs.DurationVar(&c.Settle, "settle", bench.DefaultSettle, "pause before each step")
	fs.IntVar(&c.MaxInFlight, "max-inflight", bench.DefaultWritesInFlight, "most writes outstanding")
	fs.Float64Var(&c.TraceRate, "trace-rate", bench.DefaultTraceRate, "writes per second traced on each runtime's watermark")
	fs.IntVar(&c.TraceConcurrency, "trace-concurrency", bench.DefaultTraceConcurrency, "most watermark reads in flight per runtime")
	fs.StringVar(&o.mode, "command-side", "pause", "how the runtimes are switched off for the command side and the backlog: pause (the slot keeps the backlog) or stop (a restart takes a new snapshot)")
	fs.Float64Var(&c.LoneRate, "lone-rate", bench.DefaultLoneRate, "F: lone orders per second")
	fs.DurationVar(&c.LoneWindow, "lone-window", bench.DefaultLoneWindow, "F: the window of lone orders, and of each quiet window around it (0: no F)")
	fs.IntVar(&c.Backlog, "backlog", bench.DefaultBacklog, "single-feed ceiling: one-row transactions written while the runtimes are off (0: no ceiling)")
	fs.DurationVar(&c.OverloadFor, "overload", bench.DefaultOverloadFor, "how long the whole chain is written at twice its sustained rate while its RSS is sampled (0: none)")
	fs.DurationVar(&c.CatchUpTimeout, "catch-up-timeout", bench.DefaultCatchUpTimeout, "longest wait for both runtimes to cover the last write")
	fs.DurationVar(&c.Timeout, "timeout", bench.DefaultTimeout, "timeout of each request")
	fs.Func("note", "a note for the report, e.g. what else the machine was doing (repeatable)", func(s string) error {
		c.Notes = append(c.Notes, s)
		return nil
	})
	o.postgresFlag(fs, "Postgres for the ceiling's backlog and the orders count")
	o.runtimeFlags(fs, "", "", "", "")
	fs.StringVar(&o.apiMetrics, "api-metrics", "", "the api's Prometheus URL for its memory (default: --url + /metrics; \"none\": skip)")
	o.resultFlags(fs, "bench-writes", "the goals")
	return fs
}

func runWrites(ctx context.Context, o *writesOptions, line string, stdout io.Writer) error {
	c := o.cfg
	switch {
	case o.accRuntime == "" || o.matRuntime == "":
		return fmt.Errorf("%w: --accelerated-runtime and --materialized-runtime are required (make bench-writes sets them)", errUsage)
	case o.mode != "pause" && o.mode != "stop":
		return fmt.Errorf("%w: --command-side %q: want pause or stop", errUsage, o.mode)
	case c.Step <= 0 || c.Rounds <= 0 || c.Refine < 0 || c.TraceRate <= 0 || c.LoneRate <= 0:
		return fmt.Errorf("%w: --step, --rounds, --trace-rate and --lone-rate must be > 0, --refine >= 0", errUsage)
	}
	c.BaseURL, c.Command, c.Stack, c.Processes = o.url, line, o.stack(), o.processes()
	c.Accelerated, c.Materialized = o.runtimes()
	defer c.Stack.Close()
	c.Runtimes = &bench.StackRuntimes{Stack: c.Stack, Services: []string{"accelerated", "materialized"}, Stop: o.mode == "stop"}
	pg, err := o.openPostgres(ctx, nil)
	if err != nil {
		return err
	}
	if pg != nil {
		defer pg.Close(context.WithoutCancel(ctx))
		c.DB = pg
	}
	r := bench.NewWritesRunner(c)
	r.Out = stdout
	rep, err := r.Run(ctx)
	if rep == nil || len(rep.Steps) == 0 {
		return err
	}
	if pg != nil {
		if n, cerr := pg.Count(context.WithoutCancel(ctx)); cerr == nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("orders in the table at the end of the run: %d", n))
		}
	}
	block := "bench-writes"
	if err != nil {
		rep.Notes, block = append(rep.Notes, "the run ended early: "+err.Error()), ""
	}
	md := bench.WritesMarkdown(rep)
	fmt.Fprintf(stdout, "\n%s\n", md)
	if perr := o.publish(stdout, md, rep, []string{"writes-latest"}, block, bench.WritesSummary(rep), rep.Started); perr != nil {
		return perr
	}
	return err
}
