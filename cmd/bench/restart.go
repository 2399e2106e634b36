package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// restartOptions are the flags of bench restart.
type restartOptions struct {
	stackOptions
	cfg                                      bench.RestartConfig
	sizes                                    countList
	targets, kinds                           string
	accHTTP, matHTTP, memoryFiles, fileFiles string
}

// restartFlags is the flag set of bench restart: per size, both runtimes
// stopped while orders are seeded inside Postgres, then --rounds restarts of
// each kind of each target: memory (runtime 1 in mode: memory, a new snapshot
// on every start), materialized (runtime 2, subscribes again), file (runtime
// 1 re-created with --file-mode-files: resumes from its file and its slot).
func restartFlags(o *restartOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("bench restart", flag.ContinueOnError)
	fs.StringVar(&o.project, "project", envOr("COMPOSE_PROJECT_NAME", "cqrs"), "compose project of the stack")
	fs.Var(&o.sizes, "sizes", "orders to seed to before measuring, ascending, like 1M,10M (default: the data as it is)")
	fs.StringVar(&o.targets, "targets", "memory,materialized,file", "what to restart, in order: memory, materialized, file")
	fs.StringVar(&o.kinds, "kinds", "stop,kill", "how: stop (SIGTERM, then start), kill (SIGKILL, then start)")
	fs.IntVar(&o.cfg.Rounds, "rounds", bench.DefaultRestartRounds, "restarts per target and kind")
	fs.Float64Var(&o.cfg.WriteRate, "write-rate", bench.DefaultRestartWriteRate, "orders per second inserted into Postgres during the restarts (0: none)")
	fs.DurationVar(&o.cfg.ReadyTimeout, "ready-timeout", bench.DefaultReadyTimeout, "longest wait for /v1/ready after a start")
	fs.DurationVar(&o.cfg.CatchUpTimeout, "catch-up-timeout", bench.DefaultRestartCatchUpTimeout, "longest wait, once ready, for the watermark to cover Postgres's position")
	fs.StringVar(&o.accHTTP, "accelerated-http", "http://127.0.0.1:8090", "runtime 1's HTTP API")
	fs.StringVar(&o.accMetrics, "accelerated-metrics", "http://127.0.0.1:9090/metrics", "runtime 1's metrics")
	fs.StringVar(&o.matHTTP, "materialized-http", "http://127.0.0.1:8091", "runtime 2's HTTP API")
	fs.StringVar(&o.matMetrics, "materialized-metrics", "http://127.0.0.1:9091/metrics", "runtime 2's metrics")
	fs.StringVar(&o.memoryFiles, "memory-files", "docker-compose.yml", "compose files of the stack as it runs (runtime 1 in mode: memory)")
	fs.StringVar(&o.fileFiles, "file-mode-files", "docker-compose.yml,bench/compose.file-mode.yml", "compose files with runtime 1 in mode: file")
	o.postgresFlag(fs, DefaultPostgresURL, "Postgres, for seeding, COPY and its WAL position")
	o.resultFlags(fs, "docs page whose generated:bench-restart block gets the table")
	return fs
}

// oneOf splits a comma-separated list and checks each item against valid.
func oneOf(name, list string, valid ...string) ([]string, error) {
	var out []string
	for part := range strings.SplitSeq(list, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		if !slices.Contains(valid, part) {
			return nil, fmt.Errorf("%w: %s: %q is not one of %s", errUsage, name, part, strings.Join(valid, ", "))
		}
		out = append(out, part)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s: empty; give one or more of %s", errUsage, name, strings.Join(valid, ", "))
	}
	return out, nil
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
	cfg.Sizes, cfg.Out, cfg.Command = o.sizes, stdout, line
	cfg.Accelerated = bench.RuntimeURLs{HTTP: strings.TrimRight(o.accHTTP, "/"), Metrics: o.accMetrics}
	cfg.Materialized = bench.RuntimeURLs{HTTP: strings.TrimRight(o.matHTTP, "/"), Metrics: o.matMetrics}
	cfg.MemoryFiles, cfg.FileFiles = strings.Split(o.memoryFiles, ","), strings.Split(o.fileFiles, ",")
	cfg.Stack = o.stack()
	defer cfg.Stack.Close()
	db, err := o.openPostgres(ctx)
	if err != nil {
		return err
	}
	defer db.Close(context.WithoutCancel(ctx))
	cfg.DB = db
	if cfg.WriteRate > 0 {
		writes, err := o.openPostgres(ctx)
		if err != nil {
			return err
		}
		defer writes.Close(context.WithoutCancel(ctx))
		cfg.Writes = writes
	}
	rep, err := bench.NewRestartRunner(cfg).Run(ctx)
	if rep == nil {
		return err
	}
	md := bench.RestartMarkdown(rep)
	fmt.Fprint(stdout, "\n"+md)
	js, jerr := json.MarshalIndent(rep, "", "  ")
	if jerr != nil {
		return fmt.Errorf("encode results: %w", jerr)
	}
	stamp := "restart-" + rep.Started.UTC().Format("20060102T150405Z")
	if serr := save(o.out, map[string]string{stamp + ".md": md, stamp + ".json": string(js) + "\n", "restart-latest.md": md}, stdout); serr != nil {
		return serr
	}
	if err == nil {
		updateDocs(o.docs, "bench-restart", strings.TrimPrefix(md, "# Restart benchmark\n\n"), rep.Started, stdout)
	}
	return err
}
