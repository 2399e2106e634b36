package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/chaos"
)

const restartUsage = `bench restart: time from process start to ready, catch-up and peak RSS of
each runtime of the running compose stack when it restarts, at each data size
(make bench-restart). Per size: both runtimes stopped while orders are seeded
inside Postgres, Postgres's own COPY of orders timed, then --rounds restarts of
each kind of each target:
  memory        runtime 1 in mode: memory (a new snapshot on every start)
  materialized  runtime 2 (subscribes again: a snapshot of the view, then changes)
  file          runtime 1 re-created with --file-mode-files (mode: file: resumes
                from its DuckDB file and its replication slot), then back
Writes the table to stdout and --out/restart-latest.md (and a timestamped .md, .json).

flags:
`

// restartFlags are bench restart's command line.
type restartFlags struct {
	cfg                           bench.RestartConfig
	sizes                         countList
	targets, kinds                string
	postgresURL, outDir           string
	compose, project              string
	memoryFiles, fileFiles        string
	acceleratedURL, acceleratedM  string
	materializedURL, materialized string
}

func parseRestartFlags(args []string, stderr io.Writer) (*restartFlags, error) {
	f := &restartFlags{}
	fs := flag.NewFlagSet("bench restart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, restartUsage); fs.PrintDefaults() }
	fs.Var(&f.sizes, "sizes", "orders to seed to before measuring, ascending, like 1M,10M (default: the data as it is)")
	fs.StringVar(&f.targets, "targets", "memory,materialized,file", "what to restart, in order: memory, materialized, file")
	fs.StringVar(&f.kinds, "kinds", "stop,kill", "how: stop (SIGTERM, then start), kill (SIGKILL, then start)")
	fs.IntVar(&f.cfg.Rounds, "rounds", bench.DefaultRestartRounds, "restarts per target and kind")
	fs.Float64Var(&f.cfg.WriteRate, "write-rate", bench.DefaultRestartWriteRate, "orders per second inserted into Postgres during the restarts (0: none)")
	fs.DurationVar(&f.cfg.ReadyTimeout, "ready-timeout", bench.DefaultReadyTimeout, "longest wait for /v1/ready after a start")
	fs.DurationVar(&f.cfg.CatchUpTimeout, "catch-up-timeout", bench.DefaultRestartCatchUpTimeout, "longest wait, once ready, for the watermark to cover Postgres's position")
	fs.StringVar(&f.postgresURL, "postgres-url", DefaultPostgresURL, "Postgres, for seeding, COPY and its WAL position; a URL without a password takes $PGPASSWORD")
	fs.StringVar(&f.acceleratedURL, "accelerated-http", "http://127.0.0.1:8090", "runtime 1's HTTP API")
	fs.StringVar(&f.acceleratedM, "accelerated-metrics", "http://127.0.0.1:9090/metrics", "runtime 1's metrics")
	fs.StringVar(&f.materializedURL, "materialized-http", "http://127.0.0.1:8091", "runtime 2's HTTP API")
	fs.StringVar(&f.materialized, "materialized-metrics", "http://127.0.0.1:9091/metrics", "runtime 2's metrics")
	fs.StringVar(&f.compose, "compose", envOr("COMPOSE", "docker-compose"), "compose command, run in the current directory")
	fs.StringVar(&f.project, "project", envOr("COMPOSE_PROJECT_NAME", "cqrs"), "compose project")
	fs.StringVar(&f.memoryFiles, "memory-files", "docker-compose.yml", "compose files of the stack as it runs (runtime 1 in mode: memory)")
	fs.StringVar(&f.fileFiles, "file-mode-files", "docker-compose.yml,bench/compose.file-mode.yml", "compose files with runtime 1 in mode: file")
	fs.StringVar(&f.outDir, "out", DefaultOutDir, "directory of the results")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	f.cfg.Sizes = f.sizes.v
	var err error
	if f.cfg.Targets, err = oneOf("--targets", f.targets, bench.RestartMemory, bench.RestartMaterialized, bench.RestartFile); err != nil {
		return nil, err
	}
	if f.cfg.Kinds, err = oneOf("--kinds", f.kinds, bench.RestartStop, bench.RestartKill); err != nil {
		return nil, err
	}
	f.cfg.Accelerated = bench.RuntimeURLs{HTTP: strings.TrimRight(f.acceleratedURL, "/"), Metrics: f.acceleratedM}
	f.cfg.Materialized = bench.RuntimeURLs{HTTP: strings.TrimRight(f.materializedURL, "/"), Metrics: f.materialized}
	return f, nil
}

// oneOf splits a comma-separated list and checks each item against valid.
func oneOf(flagName, list string, valid ...string) ([]string, error) {
	var out []string
	for part := range strings.SplitSeq(list, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		ok := false
		for _, v := range valid {
			ok = ok || part == v
		}
		if !ok {
			return nil, fmt.Errorf("%s: %q is not one of %s", flagName, part, strings.Join(valid, ", "))
		}
		out = append(out, part)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty; give one or more of %s", flagName, strings.Join(valid, ", "))
	}
	return out, nil
}

// restart is `bench restart`.
func restart(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, err := parseRestartFlags(args, stderr)
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench restart: %v\n", err)
		return 2
	}
	db, err := bench.OpenPostgres(ctx, f.postgresURL)
	if err != nil {
		fmt.Fprintf(stderr, "bench restart: %v\n", err)
		return 1
	}
	defer db.Close(context.WithoutCancel(ctx))
	cfg := f.cfg
	cfg.DB, cfg.Out, cfg.Command = db, stdout, commandLine(append([]string{"restart"}, args...))
	if cfg.WriteRate > 0 {
		writes, err := bench.OpenPostgres(ctx, f.postgresURL)
		if err != nil {
			fmt.Fprintf(stderr, "bench restart: %v\n", err)
			return 1
		}
		defer writes.Close(context.WithoutCancel(ctx))
		cfg.Writes = writes
	}
	cfg.Stack = &composeStack{
		stack:       &chaos.Stack{Project: f.project, Dir: ".", Compose: strings.Fields(f.compose)},
		memoryFiles: splitList(f.memoryFiles),
		fileFiles:   splitList(f.fileFiles),
	}
	rep, err := bench.NewRestartRunner(cfg).Run(ctx)
	if rep != nil {
		md := bench.RestartMarkdown(rep)
		fmt.Fprint(stdout, "\n"+md)
		if werr := writeRestart(f.outDir, rep, md); werr != nil {
			fmt.Fprintf(stderr, "bench restart: %v\n", werr)
			return 1
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench restart: %v\n", err)
		return 1
	}
	return 0
}

func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func writeRestart(dir string, rep *bench.RestartReport, md string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	stamp := "restart-" + rep.Started.UTC().Format("20060102T150405Z")
	for name, data := range map[string][]byte{
		stamp + ".md": []byte(md), stamp + ".json": append(js, '\n'), "restart-latest.md": []byte(md),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
	}
	return nil
}

// composeStack drives the compose project for the restart benchmark.
type composeStack struct {
	stack                  *chaos.Stack
	memoryFiles, fileFiles []string
}

var _ bench.RestartStack = (*composeStack)(nil)

func (s *composeStack) inspect(ctx context.Context, service, format string) (string, error) {
	id, err := s.stack.Container(ctx, service)
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, "docker", "inspect", "-f", format, id).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("docker inspect %s: %w: %s", service, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// Stop signals the service and waits until it is down, or was started again by
// its restart policy (then Start has nothing to do).
func (s *composeStack) Stop(ctx context.Context, service string, crash bool) error {
	before, err := s.inspect(ctx, service, "{{.State.StartedAt}}")
	if err != nil {
		return err
	}
	if crash {
		err = s.stack.Signal(ctx, service, "KILL")
	} else {
		var id string
		if id, err = s.stack.Container(ctx, service); err == nil {
			err = exec.CommandContext(ctx, "docker", "stop", id).Run()
		}
	}
	if err != nil {
		return fmt.Errorf("stop %s: %w", service, err)
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		st, err := s.inspect(ctx, service, "{{.State.Running}} {{.State.StartedAt}}")
		if err == nil && (strings.HasPrefix(st, "false") || !strings.HasSuffix(st, " "+before)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("stop %s: still running after a minute", service)
}

func (s *composeStack) Start(ctx context.Context, service string) error {
	return s.stack.Start(ctx, service)
}

func (s *composeStack) Process(ctx context.Context, service string) (int, time.Time, error) {
	out, err := s.inspect(ctx, service, "{{.State.Pid}} {{.State.StartedAt}}")
	if err != nil {
		return 0, time.Time{}, err
	}
	pidText, startedText, _ := strings.Cut(out, " ")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid == 0 {
		return 0, time.Time{}, fmt.Errorf("%s: no process (docker inspect: %q)", service, out)
	}
	started, err := time.Parse(time.RFC3339Nano, startedText)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("%s: start time %q: %w", service, startedText, err)
	}
	return pid, started, nil
}

func (s *composeStack) Logs(ctx context.Context, service string, since time.Time) (string, error) {
	id, err := s.stack.Container(ctx, service)
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, "docker", "logs", "--since", since.UTC().Format(time.RFC3339Nano), id).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("docker logs %s: %w", service, err)
	}
	return string(out), nil
}

// UseMode runs compose up for the accelerated service with the mode's files;
// compose re-creates the container only when its configuration changed.
func (s *composeStack) UseMode(ctx context.Context, mode string) error {
	st := *s.stack
	st.Files = s.memoryFiles
	if mode == bench.RestartFile {
		st.Files = s.fileFiles
	}
	_, err := st.Run(ctx, "up", "-d", "--no-deps", "accelerated")
	return err
}
