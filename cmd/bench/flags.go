package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// Defaults of the flags that are not the bench package's.
const (
	DefaultURL = "http://localhost:9999"
	// DefaultPostgresURL has no password: pgx takes it from $PGPASSWORD (the
	// Makefile's bench targets set it from secrets.env).
	DefaultPostgresURL = "postgres://postgres@localhost:5432/postgres?sslmode=disable"
	DefaultOutDir      = "bench/results"
	// DefaultDocs is the page whose generated blocks the runs rewrite.
	DefaultDocs = "docs/benchmarks.md"
)

// stackOptions are the flags the commands share: where the stack is and
// where the results go. Each command registers those it uses.
type stackOptions struct {
	url, project, postgresURL          string
	accRuntime, matRuntime             string
	accMetrics, matMetrics, apiMetrics string
	out, docs                          string
}

func (o *stackOptions) urlFlag(fs *flag.FlagSet) {
	fs.StringVar(&o.url, "url", DefaultURL, "base URL of the api")
}

func (o *stackOptions) projectFlag(fs *flag.FlagSet) {
	fs.StringVar(&o.project, "project", cmpEnv("COMPOSE_PROJECT_NAME", "cqrs"), "compose project of the stack, whose containers are read and switched")
}

func (o *stackOptions) postgresFlag(fs *flag.FlagSet, usage string) {
	fs.StringVar(&o.postgresURL, "postgres-url", DefaultPostgresURL, usage+"; a URL without a password takes $PGPASSWORD")
}

// runtimeFlags register the runtimes' HTTP APIs and Prometheus URLs, with
// the given defaults.
func (o *stackOptions) runtimeFlags(fs *flag.FlagSet, acc, mat, accMetrics, matMetrics string) {
	fs.StringVar(&o.accRuntime, "accelerated-runtime", acc, "runtime 1's HTTP API (http://host:8090); key from $ACCELERATED_API_KEY")
	fs.StringVar(&o.matRuntime, "materialized-runtime", mat, "runtime 2's HTTP API; key from $MATERIALIZED_API_KEY")
	fs.StringVar(&o.accMetrics, "accelerated-metrics", accMetrics, "runtime 1's Prometheus URL (http://host:9090/metrics)")
	fs.StringVar(&o.matMetrics, "materialized-metrics", matMetrics, "runtime 2's Prometheus URL")
}

func (o *stackOptions) resultFlags(fs *flag.FlagSet, block, what string) {
	fs.StringVar(&o.out, "out", DefaultOutDir, "directory of the results")
	fs.StringVar(&o.docs, "docs", DefaultDocs, fmt.Sprintf("docs page whose generated:%s block gets %s (empty: none)", block, what))
}

func (o *stackOptions) stack() *bench.Stack { return &bench.Stack{Project: o.project} }

func (o *stackOptions) runtimes() (acc, mat bench.RuntimeEndpoint) {
	return bench.RuntimeEndpoint{URL: strings.TrimRight(o.accRuntime, "/"), APIKey: os.Getenv("ACCELERATED_API_KEY"), Metrics: o.accMetrics},
		bench.RuntimeEndpoint{URL: strings.TrimRight(o.matRuntime, "/"), APIKey: os.Getenv("MATERIALIZED_API_KEY"), Metrics: o.matMetrics}
}

// processes are the stack's processes: CPU from their containers, memory from
// their metrics where given.
func (o *stackOptions) processes() []bench.Process {
	api := o.apiMetrics
	switch api {
	case "":
		api = strings.TrimRight(o.url, "/") + "/metrics"
	case "none":
		api = ""
	}
	return []bench.Process{
		{Name: bench.ProcAPI, Service: "api", MetricsURL: api},
		{Name: bench.ProcPostgres, Service: "postgres"},
		{Name: bench.ProcAccelerated, Service: "accelerated", MetricsURL: o.accMetrics},
		{Name: bench.ProcMaterialized, Service: "materialized", MetricsURL: o.matMetrics},
	}
}

// openPostgres connects to --postgres-url; nil without one.
func (o *stackOptions) openPostgres(ctx context.Context, out io.Writer) (*bench.Postgres, error) {
	if o.postgresURL == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pg, err := bench.OpenPostgres(ctx, o.postgresURL)
	if pg != nil {
		pg.Out = out
	}
	return pg, err
}

// publish writes md as <name>.md under --out for each of names, and rep as
// JSON as the first name's .json; then, unless block is empty, docsBody into
// the generated block of --docs, stamped with the run's start and the commit
// (a missing page, when bench runs outside the repository, is left alone).
func (o *stackOptions) publish(stdout io.Writer, md string, rep any, names []string, block, docsBody string, started time.Time) error {
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	files := map[string]string{names[0] + ".json": string(js) + "\n"}
	for _, n := range names {
		files[n+".md"] = md
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := os.WriteFile(filepath.Join(o.out, name), []byte(files[name]), 0o644); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
		fmt.Fprintf(stdout, "results: %s\n", filepath.Join(o.out, name))
	}
	if block != "" && o.docs != "" {
		bench.UpdateDocs(o.docs, block, docsBody, started, stdout)
	}
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format("20060102T150405Z") }

func cmpEnv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// list is a comma-separated flag of values that parse reads.
type list[T any] struct {
	v     *[]T
	parse func(string) (T, error)
}

func (l list[T]) String() string {
	if l.v == nil {
		return ""
	}
	parts := make([]string, len(*l.v))
	for i, x := range *l.v {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}

func (l list[T]) Set(s string) error {
	*l.v = nil
	for part := range strings.SplitSeq(s, ",") {
		x, err := l.parse(strings.TrimSpace(part))
		if err != nil {
			return err
		}
		*l.v = append(*l.v, x)
	}
	return nil
}

// rates is a list of positive rates.
func rates(v *[]float64) list[float64] {
	return list[float64]{v, func(s string) (float64, error) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f <= 0 {
			return 0, fmt.Errorf("%q is not a positive rate", s)
		}
		return f, nil
	}}
}

// counts is a list of positive counts, with optional k and M suffixes.
func counts(v *[]int64) list[int64] {
	return list[int64]{v, func(s string) (int64, error) {
		mult := int64(1)
		for suffix, m := range map[string]int64{"k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6} {
			if t, ok := strings.CutSuffix(s, suffix); ok {
				s, mult = t, m
			}
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q is not a positive count like 100000 or 100k", s)
		}
		return n * mult, nil
	}}
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
