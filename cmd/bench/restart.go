package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// restartOptions are the flags of bench restart.
type restartOptions struct {
	stackOptions
	cfg                               bench.RestartConfig
	targets, kinds, memory, fileFiles string
}

// restartFlags is the flag set of bench restart: per size, both runtimes
// stopped while orders are seeded inside Postgres, then --rounds restarts of
// each kind of each target: memory (runtime 1 in mode: memory, a new snapshot
// on every start), materialized (runtime 2, subscribes again), file (runtime
// 1 re-created with --file-mode-files: resumes from its file and its slot).
func restartFlags(o *restartOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("bench restart", flag.ContinueOnError)
	o.projectFlag(fs)
	fs.Var(counts(&o.cfg.Sizes), "sizes", "orders to seed to before measuring, ascending, like 1M,10M (default: the data as it is)")
	fs.StringVar(&o.targets, "targets", "memory,materialized,file", "what to restart, in order: memory, materialized, file")
	fs.StringVar(&o.kinds, "kinds", "stop,kill", "how: stop (SIGTERM, then start), kill (SIGKILL, then start)")
	fs.IntVar(&o.cfg.Rounds, "rounds", bench.DefaultRestartRounds, "restarts per target and kind")
	fs.Float64Var(&o.cfg.WriteRate, "write-rate", bench.DefaultRestartWriteRate, "orders per second inserted into Postgres during the restarts (0: none)")
	fs.DurationVar(&o.cfg.ReadyTimeout, "ready-timeout", bench.DefaultReadyTimeout, "longest wait for /v1/ready after a start")
	fs.DurationVar(&o.cfg.CatchUpTimeout, "catch-up-timeout", bench.DefaultRestartCatchUpTimeout, "longest wait, once ready, for the watermark to cover Postgres's position")
	o.runtimeFlags(fs, "http://127.0.0.1:8090", "http://127.0.0.1:8091", "http://127.0.0.1:9090/metrics", "http://127.0.0.1:9091/metrics")
	fs.StringVar(&o.memory, "memory-files", "docker-compose.yml", "compose files of the stack as it runs (runtime 1 in mode: memory)")
	fs.StringVar(&o.fileFiles, "file-mode-files", "docker-compose.yml,bench/compose.file-mode.yml", "compose files with runtime 1 in mode: file")
	o.postgresFlag(fs, "Postgres, for seeding, COPY and its WAL position")
	o.resultFlags(fs, "bench-restart", "the table")
	return fs
}

func runRestart(ctx context.Context, o *restartOptions, line string, stdout io.Writer) error {
	cfg := o.cfg
	var err error
	if cfg.Targets, err = oneOf("--targets", o.targets, bench.RestartMemory, bench.RestartMaterialized, bench.RestartFile); err != nil {
		return err
	}
	if cfg.Kinds, err = oneOf("--kinds", o.kinds, bench.RestartStop, bench.RestartKill); err != nil {
		return err
	}
	cfg.Out, cfg.Command, cfg.Stack = stdout, line, o.stack()
	cfg.Accelerated, cfg.Materialized = o.runtimes()
	cfg.MemoryFiles, cfg.FileFiles = strings.Split(o.memory, ","), strings.Split(o.fileFiles, ",")
	defer cfg.Stack.Close()
	if o.postgresURL == "" {
		return fmt.Errorf("%w: bench restart needs Postgres at --postgres-url", errUsage)
	}
	if cfg.DB, err = o.openPostgres(ctx, nil); err != nil {
		return err
	}
	defer cfg.DB.Close(context.WithoutCancel(ctx))
	if cfg.WriteRate > 0 {
		if cfg.Writes, err = o.openPostgres(ctx, nil); err != nil {
			return err
		}
		defer cfg.Writes.Close(context.WithoutCancel(ctx))
	}
	rep, err := bench.NewRestartRunner(cfg).Run(ctx)
	md := bench.RestartMarkdown(rep)
	fmt.Fprint(stdout, "\n"+md)
	block := "bench-restart"
	if err != nil {
		block = ""
	}
	name := "restart-" + stamp(rep.Started)
	if perr := o.publish(stdout, md, rep, []string{name, "restart-latest"}, block, strings.TrimPrefix(md, "# Restart benchmark\n\n"), rep.Started); perr != nil {
		return perr
	}
	return err
}
