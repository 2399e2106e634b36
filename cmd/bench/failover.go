package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// failoverOptions are the flags of bench failover.
type failoverOptions struct {
	stackOptions
	cfg                   bench.FailoverConfig
	service               string
	replicas              int
	killAt, addAt, downAt time.Duration
}

// failoverFlags is the flag set of bench failover: the stack must run with
// --replicas replicas of --service; at --kill-at one is SIGKILLed and
// removed, at --add-at one is added, at --scale-down-at the service is scaled
// to 1 (the others drain and stop).
func failoverFlags(o *failoverOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("bench failover", flag.ContinueOnError)
	o.urlFlag(fs)
	o.projectFlag(fs)
	fs.StringVar(&o.cfg.Path, "path", "/ranking-materialized", "the path read")
	fs.IntVar(&o.cfg.Concurrency, "c", 100, "connections of the closed loop")
	fs.DurationVar(&o.cfg.Duration, "z", 40*time.Second, "length of the load")
	fs.Float64Var(&o.cfg.WriteRate, "write-rate", 20, "POST /orders per second, each read back with its Spice-Position")
	fs.DurationVar(&o.cfg.Window, "window", bench.DefaultFailoverWindow, "latencies after each event are reported for this long")
	fs.StringVar(&o.service, "service", "materialized", "the compose service whose replicas are killed and added")
	fs.IntVar(&o.replicas, "replicas", 3, "replicas of the service during the run")
	fs.DurationVar(&o.killAt, "kill-at", 10*time.Second, "when to SIGKILL a replica (0: never)")
	fs.DurationVar(&o.addAt, "add-at", 20*time.Second, "when to add a replica (0: never)")
	fs.DurationVar(&o.downAt, "scale-down-at", 30*time.Second, "when to scale the service to 1 (0: never)")
	return fs
}

func runFailover(ctx context.Context, o *failoverOptions, stdout io.Writer) error {
	st := o.stack()
	defer st.Close()
	reps := &bench.Replicas{Stack: st, Service: o.service}
	if cs, err := st.Containers(ctx, o.service, false); err != nil || len(cs) != o.replicas {
		return fmt.Errorf("%d replicas of %s run, want %d (%v): start the stack with make up MATERIALIZED_REPLICAS=%d", len(cs), o.service, o.replicas, err, o.replicas)
	}
	var victim string
	var killedAt time.Time
	cfg := o.cfg
	for _, ev := range []bench.FailoverEvent{
		{Name: "SIGKILL one replica", At: o.killAt, Do: func(ctx context.Context) (string, error) {
			var err error
			killedAt = time.Now()
			victim, err = reps.Kill(ctx)
			return "killed the replica at " + victim, err
		}},
		{Name: "add a replica", At: o.addAt, Do: func(ctx context.Context) (string, error) {
			return fmt.Sprintf("scaled %s to %d", o.service, o.replicas), reps.Scale(ctx, o.replicas)
		}},
		{Name: "scale down to 1", At: o.downAt, Do: func(ctx context.Context) (string, error) {
			return fmt.Sprintf("scaled %s to 1", o.service), reps.Scale(ctx, 1)
		}},
	} {
		if ev.At > 0 {
			cfg.Events = append(cfg.Events, ev)
		}
	}
	start := time.Now()
	c := bench.NewClient(o.url, cfg.Concurrency, 0)
	defer c.Close()
	fmt.Fprint(stdout, bench.FailoverMarkdown(bench.RunFailover(ctx, c, cfg)))
	if victim != "" {
		for _, line := range reps.Ejection(ctx, start, victim, killedAt) {
			fmt.Fprintf(stdout, "- %s\n", line)
		}
	}
	return ctx.Err()
}
