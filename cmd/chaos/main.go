// Command chaos injects real faults into the compose stack, one per round,
// under a steady workload, and checks after each that nothing was lost,
// doubled or read stale. It writes a Markdown table to --out/latest.md.
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

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/chaos"
)

// QuickFaults are the faults of --quick, the CI setting.
var QuickFaults = []string{chaos.FaultKillAccelerated, chaos.FaultRestartPostgres, chaos.FaultPartitionMaterial}

// DefaultDocs is the page whose generated:chaos block a run of every fault rewrites.
const DefaultDocs = "docs/chaos.md"

type config struct {
	project, dir, faults, out, docs string
	portBase                        int
	quick, down, fresh              bool
	set                             chaos.Settings
	opts                            chaos.Options
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

// flags is chaos's flag set.
func flags(c *config) *flag.FlagSet {
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.StringVar(&c.project, "project", "cqrs-chaos", "compose project name (never the main stack's)")
	fs.StringVar(&c.dir, "dir", ".", "directory of docker-compose.yml")
	fs.IntVar(&c.portBase, "port-base", 19990, "host ports base, base+1, ... for "+strings.Join(chaos.PortVars, ", "))
	fs.StringVar(&c.faults, "faults", "", "comma-separated faults to run, in order (default: all)")
	fs.BoolVar(&c.quick, "quick", false, "the CI setting: "+strings.Join(QuickFaults, ", ")+" with a 10 s partition")
	fs.DurationVar(&c.set.Partition, "partition", chaos.DefaultPartition, "how long a partition lasts")
	fs.Int64Var(&c.set.Seed, "seed", chaos.DefaultSeed, "orders in Postgres before the kills during a snapshot")
	fs.Float64Var(&c.opts.WriteRate, "write-rate", chaos.DefaultWriteRate, "orders per second during every round but the load rounds")
	fs.Float64Var(&c.opts.LoadRate, "load-rate", chaos.DefaultLoadRate, "orders per second of the load rounds: pass 80% of the whole chain's sustained rate that make bench-writes finds; the overload rounds write twice that")
	fs.IntVar(&c.opts.ReadersPerPath, "readers", chaos.DefaultReadersPerPath, "readers per ranking endpoint")
	fs.DurationVar(&c.opts.Warmup, "warmup", chaos.DefaultWarmup, "workload before each fault")
	fs.DurationVar(&c.opts.Settle, "settle", chaos.DefaultSettle, "workload after each recovery")
	fs.DurationVar(&c.opts.RecoverTimeout, "recover-timeout", chaos.DefaultRecoverTimeout, "longest wait for recovery and convergence")
	fs.StringVar(&c.out, "out", "chaos/results", "directory for latest.md")
	fs.BoolVar(&c.down, "down", false, "remove the stack and its volumes at the end")
	fs.BoolVar(&c.fresh, "fresh", false, "remove the stack and its volumes first, so the run does not depend on what an earlier one left (a full run seeds 1M orders, which /ranking then aggregates on every read)")
	fs.StringVar(&c.docs, "docs", DefaultDocs, "docs page whose generated:chaos block gets the table of a run of every fault (empty: none)")
	return fs
}

func parse(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flags(&c)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	partitionSet := false
	fs.Visit(func(f *flag.Flag) { partitionSet = partitionSet || f.Name == "partition" })
	if c.quick && c.faults == "" {
		c.faults = strings.Join(QuickFaults, ",")
	}
	if c.quick && !partitionSet {
		c.set.Partition = 10 * time.Second
	}
	c.set.WriteRate, c.set.LoadRate = c.opts.WriteRate, c.opts.LoadRate
	catalog := chaos.Catalog(c.set)
	var names []string
	for _, f := range catalog {
		names = append(names, f.Name)
	}
	if c.faults != "" {
		names = strings.Split(c.faults, ",")
	}
	var err error
	c.opts.Faults, err = chaos.Select(catalog, names)
	return c, err
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
	defer s.Stack.Close()
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
	if werr := os.MkdirAll(c.out, 0o755); werr != nil {
		return fmt.Errorf("write the report: %w", werr)
	}
	if werr := os.WriteFile(filepath.Join(c.out, "latest.md"), []byte(md), 0o644); werr != nil {
		return fmt.Errorf("write the report: %w", werr)
	}
	if c.faults == "" && !c.quick && err == nil && c.docs != "" {
		bench.UpdateDocs(c.docs, "chaos", strings.Replace(md, "# Chaos run ", "Run of ", 1), rep.Started, stdout)
	}
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
