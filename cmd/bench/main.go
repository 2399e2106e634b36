// Command bench measures the recipe's api the way the recipe's oha table does,
// and more fairly: every scenario in one run, interleaved, after a warm-up,
// under a steady write load, with write-to-visible lag per hop and at several
// data sizes. Its subcommands measure the write path (writes), reads under
// heavy ad-hoc queries (heavy), replicas failing (failover) and restarts at
// scale (restart). See `bench --help`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/peterbourgon/ff/v3/ffcli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// errUsage marks flags that parse but do not make sense together.
var errUsage = errors.New("bad flags")

// run parses args and runs the command they name: exit status 0 when it
// measured (goals missed or not), 1 when the stack is unreachable or the tool
// failed, 2 on bad flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := rootCommand(commandLine(args), stdout, stderr)
	if err := root.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	if err := root.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return 0
}

// rootCommand is bench and its subcommands; line is recorded in the reports.
func rootCommand(line string, stdout, stderr io.Writer) *ffcli.Command {
	scale, wr, hv, fo, rs := &scaleOptions{}, &writesOptions{}, &heavyOptions{}, &failoverOptions{}, &restartOptions{}
	cmd := func(name, help string, fs *flag.FlagSet, exec func(context.Context) error) *ffcli.Command {
		fs.SetOutput(stderr)
		return &ffcli.Command{Name: name, ShortUsage: "bench " + name + " [flags]", ShortHelp: help, FlagSet: fs,
			Exec: func(ctx context.Context, _ []string) error { return exec(ctx) }}
	}
	fs := scaleFlags(scale)
	fs.SetOutput(stderr)
	return &ffcli.Command{
		Name:       "bench",
		ShortUsage: "bench [flags] | bench <subcommand> [flags]",
		LongHelp: `Without a subcommand, bench measures the recipe's api: every scenario in one run,
interleaved, under writes, with freshness per hop, optionally at several data
sizes (make bench, make bench-scale, make bench-quick):

  go run ./cmd/bench --quick                          # about a minute, current data
  go run ./cmd/bench -z 10s --scale 10k,100k,1M       # the full run

Exit status: 0 when it measured (goals missed or not), 1 when the stack is
unreachable or the tool failed, 2 on bad flags.`,
		FlagSet: fs,
		Subcommands: []*ffcli.Command{
			cmd("writes", "the write path: the rate the command side and the whole chain sustain, F, the ceiling, overload (make bench-writes)",
				writesFlags(wr), func(ctx context.Context) error { return runWrites(ctx, wr, line, stdout) }),
			cmd("heavy", "ranking reads idle and under six unique heavy cross joins on runtime 1 (make bench-heavy)",
				heavyFlags(hv), func(ctx context.Context) error { return runHeavy(ctx, hv, stdout) }),
			cmd("failover", "reads while materialized replicas are killed, added and scaled down (make bench-failover)",
				failoverFlags(fo), func(ctx context.Context) error { return runFailover(ctx, fo, stdout) }),
			cmd("restart", "restarts at scale: time to ready and caught up, peak RSS, per mode (make bench-restart)",
				restartFlags(rs), func(ctx context.Context) error { return runRestart(ctx, rs, line, stdout) }),
		},
		Exec: func(ctx context.Context, rest []string) error {
			if len(rest) > 0 {
				return fmt.Errorf("%w: unknown subcommand %q; see bench --help", errUsage, rest[0])
			}
			return runScale(ctx, fs, scale, line, stdout)
		},
	}
}

// commandLine is the command that reproduces a run, for the report.
func commandLine(args []string) string {
	parts := []string{"go run ./cmd/bench"}
	for _, a := range args {
		if strings.ContainsAny(a, " '\"$&;|") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
