// Command chaos injects real faults into the compose stack, one per round, under
// a steady workload, and checks after each that nothing was lost, doubled or
// read stale. It writes a Markdown table to --out/latest.md.
//
//	go run ./cmd/chaos                      # every fault, the stack on ports 19990-19997
//	go run ./cmd/chaos --quick              # three faults, short partition
//	go run ./cmd/chaos --faults kill-api,drop-slot
//	go run ./cmd/chaos --load-rate 200      # load rounds at 200 orders/s, overload at 400
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cqrs-spice/cqrs/internal/chaos"
)

// QuickFaults are the faults of --quick, the CI setting.
var QuickFaults = []string{chaos.FaultKillAccelerated, chaos.FaultRestartPostgres, chaos.FaultPartitionMaterial}

type config struct {
	project   string
	dir       string
	portBase  int
	faults    string
	quick     bool
	partition time.Duration
	seed      int64
	loadRate  float64
	opts      chaos.Options
	out       string
	docs      string
	down      bool
	fresh     bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "chaos:", err)
		}
		os.Exit(1)
	}
}

func parse(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.project, "project", "cqrs-chaos", "compose project name (never the main stack's)")
	fs.StringVar(&c.dir, "dir", ".", "directory of docker-compose.yml")
	fs.IntVar(&c.portBase, "port-base", 19990, "host ports base, base+1, ... for "+strings.Join(chaos.PortVars, ", "))
	fs.StringVar(&c.faults, "faults", "", "comma-separated faults to run, in order (default: all)")
	fs.BoolVar(&c.quick, "quick", false, "the CI setting: "+strings.Join(QuickFaults, ", ")+" with a 10 s partition")
	fs.DurationVar(&c.partition, "partition", chaos.DefaultPartition, "how long a partition lasts")
	fs.Int64Var(&c.seed, "seed", chaos.DefaultSeed, "orders in Postgres before the kills during a snapshot")
	fs.Float64Var(&c.opts.WriteRate, "write-rate", chaos.DefaultWriteRate, "orders per second during every round but the load rounds")
	fs.Float64Var(&c.loadRate, "load-rate", chaos.DefaultLoadRate, "orders per second of the load rounds, 80% of the sustained rate "+
		"the write benchmark finds; the overload rounds write twice that")
	fs.IntVar(&c.opts.ReadersPerPath, "readers", chaos.DefaultReadersPerPath, "readers per ranking endpoint")
	fs.DurationVar(&c.opts.Warmup, "warmup", chaos.DefaultWarmup, "workload before each fault")
	fs.DurationVar(&c.opts.Settle, "settle", chaos.DefaultSettle, "workload after each recovery")
	fs.DurationVar(&c.opts.RecoverTimeout, "recover-timeout", chaos.DefaultRecoverTimeout, "longest wait for recovery and convergence")
	fs.StringVar(&c.out, "out", "chaos/results", "directory for latest.md")
	fs.BoolVar(&c.down, "down", false, "remove the stack and its volumes at the end")
	fs.BoolVar(&c.fresh, "fresh", false, "remove the stack and its volumes first, so the run does not depend on what an earlier one left "+
		"(a full run seeds 1M orders, which /ranking then aggregates on every read)")
	fs.StringVar(&c.docs, "docs", DefaultDocs, "docs page whose generated:chaos block gets the table of a run of every fault (empty: none)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.quick {
		if c.faults == "" {
			c.faults = strings.Join(QuickFaults, ",")
		}
		if !isSet(fs, "partition") {
			c.partition = 10 * time.Second
		}
	}
	catalog := chaos.Catalog(chaos.Settings{Partition: c.partition, Seed: c.seed, WriteRate: c.opts.WriteRate, LoadRate: c.loadRate})
	names := strings.Split(c.faults, ",")
	if c.faults == "" {
		names = nil
		for _, f := range catalog {
			names = append(names, f.Name)
		}
	}
	c.opts.LoadRate = c.loadRate
	var err error
	c.opts.Faults, err = chaos.Select(catalog, names)
	return c, err
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parse(args, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	dir, err := filepath.Abs(c.dir)
	if err != nil {
		return err
	}
	if err := chaos.CheckSecrets(dir); err != nil {
		return err
	}
	s := chaos.NewSuite(c.project, dir, chaos.PortsFrom(c.portBase), logger)
	if c.down {
		defer func() {
			if err := s.Down(context.Background()); err != nil {
				logger.Error("remove the stack", "err", err)
			}
		}()
	}
	if c.fresh {
		logger.Info("removing the stack and its volumes first (--fresh)", "project", c.project)
		if err := s.Down(ctx); err != nil {
			return fmt.Errorf("remove the stack (--fresh): %w", err)
		}
	}
	if err := s.Up(ctx, 5*time.Minute); err != nil {
		return err
	}
	rep, err := s.Run(ctx, c.opts)
	md := chaos.Markdown(rep)
	fmt.Fprint(stdout, md)
	if werr := write(c.out, md); werr != nil {
		return werr
	}
	updateDocs(c.docs, c.faults == "" && !c.quick && err == nil, rep, md, stdout)
	if err != nil {
		return err
	}
	for _, r := range rep.Results {
		if !r.Clean() {
			return fmt.Errorf("fault %s found problems: see %s", r.Fault, filepath.Join(c.out, "latest.md"))
		}
	}
	return nil
}

func write(dir, md string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "latest.md"), []byte(md), 0o644)
}
