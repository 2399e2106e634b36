package main

import (
	"context"
	"errors"
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
	"github.com/cqrs-spice/cqrs/internal/docgen"
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

func (o *stackOptions) apiFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.url, "url", DefaultURL, "base URL of the api")
	fs.StringVar(&o.project, "project", envOr("COMPOSE_PROJECT_NAME", "cqrs"), "compose project of the stack, whose containers are read and switched")
}

func (o *stackOptions) postgresFlag(fs *flag.FlagSet, def, usage string) {
	fs.StringVar(&o.postgresURL, "postgres-url", def, usage+"; a URL without a password takes $PGPASSWORD")
}

func (o *stackOptions) runtimeFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.accRuntime, "accelerated-runtime", "", "runtime 1's HTTP API (http://host:8090) for its orders watermark; key from $ACCELERATED_API_KEY")
	fs.StringVar(&o.matRuntime, "materialized-runtime", "", "runtime 2's HTTP API for its rankings watermark; key from $MATERIALIZED_API_KEY")
	fs.StringVar(&o.accMetrics, "accelerated-metrics", "", "runtime 1's Prometheus URL (http://host:9090/metrics) for its memory")
	fs.StringVar(&o.matMetrics, "materialized-metrics", "", "runtime 2's Prometheus URL for its memory")
	fs.StringVar(&o.apiMetrics, "api-metrics", "", "the api's Prometheus URL for its memory (default: --url + /metrics; \"none\": skip)")
}

func (o *stackOptions) resultFlags(fs *flag.FlagSet, docsUsage string) {
	fs.StringVar(&o.out, "out", DefaultOutDir, "directory of the results")
	fs.StringVar(&o.docs, "docs", DefaultDocs, docsUsage+" (empty: none)")
}

func (o *stackOptions) stack() *bench.Stack { return &bench.Stack{Project: o.project} }

func (o *stackOptions) endpoint(url, keyVar string) bench.RuntimeEndpoint {
	return bench.RuntimeEndpoint{URL: url, APIKey: os.Getenv(keyVar)}
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
func (o *stackOptions) openPostgres(ctx context.Context) (*bench.Postgres, error) {
	if o.postgresURL == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return bench.OpenPostgres(ctx, o.postgresURL)
}

// save writes the results files under dir and prints where they are.
func save(dir string, files map[string]string, stdout io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(files[name]), 0o644); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
		fmt.Fprintf(stdout, "results: %s\n", filepath.Join(dir, name))
	}
	return nil
}

// updateDocs writes body into the generated block of page, stamped with the
// run's start and the commit. An empty page name or a missing page (bench run
// outside the repository) is left alone.
func updateDocs(page, block, body string, started time.Time, stdout io.Writer) {
	if page == "" {
		return
	}
	stamp := docgen.Stamp{Time: started, Commit: docgen.Commit(context.Background(), filepath.Dir(page))}
	err := docgen.UpdateFile(page, block, body, stamp)
	switch {
	case err == nil:
		fmt.Fprintf(stdout, "docs: %s updated (%s)\n", page, block)
	case !errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(stdout, "note: %v\n", err)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// floatList is a comma-separated list of positive numbers.
type floatList []float64

func (l *floatList) String() string {
	var parts []string
	for _, f := range *l {
		parts = append(parts, strconv.FormatFloat(f, 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

func (l *floatList) Set(s string) error {
	*l = nil
	for part := range strings.SplitSeq(s, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || f <= 0 {
			return fmt.Errorf("%q is not a positive rate", part)
		}
		*l = append(*l, f)
	}
	return nil
}

// countList is a comma-separated list of counts, with optional k and M suffixes.
type countList []int64

func (l *countList) String() string {
	var parts []string
	for _, n := range *l {
		parts = append(parts, strconv.FormatInt(n, 10))
	}
	return strings.Join(parts, ",")
}

func (l *countList) Set(s string) error {
	*l = nil
	for part := range strings.SplitSeq(s, ",") {
		n, err := parseCount(strings.TrimSpace(part))
		if err != nil {
			return err
		}
		*l = append(*l, n)
	}
	return nil
}

func parseCount(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1_000, s[:len(s)-1]
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		mult, s = 1_000_000, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive count like 100000 or 100k", s)
	}
	return n * mult, nil
}
