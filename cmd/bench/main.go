// Command bench measures the recipe's api the way the recipe's oha table does, and
// more fairly: all scenarios in one run, interleaved, after a warm-up, under a
// steady write load, with write-to-visible lag per hop and at several data sizes.
// It writes bench/results/<time>.md (and .svg, .json), latest.md and latest.svg.
// See `bench --help`.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "failover" {
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		return failover(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "writes" {
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		return writes(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "restart" {
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		return restart(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "heavy" {
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		return heavy(ctx, args[1:], stdout, stderr)
	}
	opts, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	opts.Config.Command = commandLine(args)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := &Main{Options: opts, Stdout: stdout}
	defer m.Close()
	if err := m.Run(ctx); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

// Main is the bench command: it wires Postgres (pgx or docker exec psql) into the
// runner, runs it and writes the results.
type Main struct {
	Options Options
	Stdout  io.Writer
	// Report is the last run's, once Run returned.
	Report *bench.Report

	pg *bench.Postgres
}

// Run measures and writes the results. It fails when the api is unreachable,
// seeding fails or the results cannot be written; never because a goal was missed.
func (m *Main) Run(ctx context.Context) error {
	cfg := m.Options.Config
	if _, err := exec.LookPath(cfg.Docker); cfg.Docker != "" && err != nil {
		cfg.Docker = "" // no docker CLI: memory from metrics only, docker version n/a
	}
	db, err := m.openDB(ctx, cfg)
	if err != nil {
		return err
	}
	cfg.DB = db
	r := bench.NewRunner(cfg)
	r.Out = m.Stdout
	rep, err := r.Run(ctx)
	if err != nil {
		return err
	}
	if db == nil {
		rep.Notes = append(rep.Notes, "orders not counted: Postgres was not reachable at --postgres-url; pass it or --postgres-container")
	}
	m.Report = rep
	return m.write(rep)
}

// openDB returns the database to seed and count through: docker exec psql when a
// container is named, else pgx at the URL. Without --scale, a Postgres that cannot
// be reached only costs the order count.
func (m *Main) openDB(ctx context.Context, cfg bench.Config) (bench.DB, error) {
	if c := m.Options.PostgresContainer; c != "" {
		db := &bench.DockerPSQL{Docker: cfg.Docker, Container: c}
		if _, err := db.Int(ctx, "SELECT 1"); err != nil {
			if len(cfg.Scale) > 0 {
				return nil, fmt.Errorf("seed through container %s: %w", c, err)
			}
			return nil, nil
		}
		return db, nil
	}
	if m.Options.PostgresURL == "" {
		return nil, nil
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pg, err := bench.OpenPostgres(cctx, m.Options.PostgresURL)
	if err != nil {
		if len(cfg.Scale) > 0 {
			return nil, err
		}
		return nil, nil
	}
	m.pg = pg
	return pg, nil
}

// Close closes the Postgres connection, if any.
func (m *Main) Close() {
	if m.pg != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = m.pg.Close(ctx)
		m.pg = nil
	}
}

// write stores the results and prints the goals, the oha commands and the paths.
func (m *Main) write(rep *bench.Report) error {
	dir := m.Options.OutDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	md, svg := bench.Markdown(rep), bench.SVG(rep)
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	stamp := rep.Started.UTC().Format("20060102T150405Z")
	files := []struct {
		name string
		data []byte
	}{
		{stamp + ".md", []byte(md)}, {stamp + ".svg", []byte(svg)}, {stamp + ".json", append(js, '\n')},
		{"latest.md", []byte(md)}, {"latest.svg", []byte(svg)},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
	}
	out := m.Stdout
	for _, s := range rep.Sizes {
		fmt.Fprintf(out, "goals at %s:\n", sizeTitle(s.Orders))
		for _, g := range bench.Goals(s, rep.Settings.Concurrency) {
			fmt.Fprintf(out, "  %-4s  %-58s %s\n", g.Status, g.Goal, g.Got)
		}
		for _, g := range bench.Goals14(s) {
			fmt.Fprintf(out, "  %-4s  %-58s %s\n", g.Status, g.Goal, g.Got)
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(out, "note: %s\n", n)
	}
	fmt.Fprintf(out, "\nthe same with oha, one scenario at a time:\n")
	for _, c := range bench.OhaCommands(rep.Settings) {
		fmt.Fprintf(out, "  %s\n", c)
	}
	fmt.Fprintf(out, "\nresults: %s, %s, %s\n", filepath.Join(dir, stamp+".md"), filepath.Join(dir, "latest.md"), filepath.Join(dir, "latest.svg"))
	updateDocs(m.Options.Docs, rep, out)
	return nil
}

func sizeTitle(orders int64) string {
	if orders < 0 {
		return "current data"
	}
	return fmt.Sprintf("%d orders", orders)
}

// commandLine is the command that reproduces the run, for the report.
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
