//go:build duckdb_arrow

// Command dataruntime is a Spice-compatible data runtime: it reads a spicepod.yaml,
// accelerates its datasets in embedded DuckDB, and answers Arrow Flight SQL, plain
// Flight and the Spice HTTP API. docs/configuration.md lists the flags and subcommands.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/cqrs-spice/cqrs/internal/docgen"
	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres/cdc"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/httpsrv"
	"github.com/cqrs-spice/cqrs/internal/version"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "healthcheck":
			return healthcheck(args[1:], stderr)
		case "drop-slots":
			return dropSlots(ctx, args[1:], os.Getenv, stderr)
		}
	}
	cfg, err := parseFlags(args, os.Getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil && cfg.PrintVersion {
		fmt.Fprintln(stdout, "dataruntime", version.Version)
		return 0
	}
	if err != nil {
		return 2
	}
	logger := logging.New(cfg.LogLevel, cfg.LogFormat, stderr)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := NewMain(cfg, logger)
	if err := m.Run(ctx); err != nil {
		logger.Error("start failed", logging.ErrorKey, err)
		_ = m.Close()
		return 1
	}
	<-ctx.Done()
	m.Drain(cfg.Drain)
	logger.Info("shutting down")
	if err := m.Close(); err != nil {
		logger.Error("shutdown", logging.ErrorKey, err)
		return 1
	}
	return 0
}

// parseFlags reads the command line; LOG_LEVEL, LOG_FORMAT and
// SPICE_INSTANCE_ID (through getenv) are the defaults of --log-level,
// --log-format and --instance-id. An unknown value is an error naming the valid
// ones, written to stderr.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
	cfg, err := envConfig(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "dataruntime: %v\n", err)
		return cfg, err
	}
	var mem memoryLimitFlag
	fs := runtimeFlags(&cfg, &mem, stderr)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.MemoryLimit = mem.bytes
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q; see --help\n", fs.Arg(0))
		return cfg, fmt.Errorf("unexpected argument")
	}
	return cfg, nil
}

// runtimeEnv is the environment dataruntime reads, for --help and the docs.
var runtimeEnv = []docgen.Var{
	{Name: "LOG_LEVEL", Default: "info", Usage: "default of --log-level; an unknown value stops the start, naming the valid ones"},
	{Name: "LOG_FORMAT", Default: "text", Usage: "default of --log-format; json writes one object a line"},
	{Name: cdc.EnvInstance, Default: "", Usage: "default of --instance-id; compose sets auto for the accelerated service"},
	{Name: "GOMEMLIMIT", Default: "", Usage: "Go's soft heap limit; unset, the runtime sets it to 2/5 of --memory-limit; set, the runtime leaves it alone"},
}

// envConfig is the configuration before the flags: the code's defaults, with
// LOG_LEVEL, LOG_FORMAT and SPICE_INSTANCE_ID read through getenv.
func envConfig(getenv func(string) string) (Config, error) {
	cfg := Config{LogLevel: slog.LevelInfo, LogFormat: "text", InstanceID: getenv(cdc.EnvInstance)}
	for _, e := range []struct {
		name string
		set  func(string) error
	}{
		{"LOG_LEVEL", func(v string) (err error) { cfg.LogLevel, err = logging.ParseLevel(v); return err }},
		{"LOG_FORMAT", func(v string) (err error) { cfg.LogFormat, err = logging.ParseFormat(v); return err }},
	} {
		if v := strings.TrimSpace(getenv(e.name)); v != "" {
			if err := e.set(v); err != nil {
				return cfg, fmt.Errorf("%s=%q: %w", e.name, v, err)
			}
		}
	}
	return cfg, nil
}

// runtimeFlags returns dataruntime's flag set, which writes into cfg and mem;
// cfg's log settings and instance id are the defaults of their flags.
func runtimeFlags(cfg *Config, mem *memoryLimitFlag, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("dataruntime", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Spicepod, "spicepod", "spicepod.yaml", "the spicepod to serve")
	fs.StringVar(&cfg.HTTPAddr, "http", "127.0.0.1:8090", "address of the HTTP API")
	fs.StringVar(&cfg.FlightAddr, "flight", "127.0.0.1:50051", "address of Arrow Flight and Flight SQL")
	fs.StringVar(&cfg.MetricsAddr, "metrics", "", "address of Prometheus /metrics and /debug/pprof/; off when empty (9090 by convention)")
	fs.StringVar(&cfg.DataDir, "data-dir", ".spice/data", "directory of the DuckDB file for datasets with acceleration mode: file")
	fs.StringVar(&cfg.InstanceID, "instance-id", cfg.InstanceID, "names this instance's replication slot; keep it stable across restarts (replicas of one spicepod need distinct ids); \"auto\" derives it from the container's compose name (docs/operations.md, Replicas); default $"+cdc.EnvInstance)
	fs.Var(levelValue{&cfg.LogLevel}, "log-level", "`level`: "+logging.Levels+"; default $LOG_LEVEL, else info")
	fs.Var(formatValue{&cfg.LogFormat}, "log-format", "`format`: "+logging.Formats+"; default $LOG_FORMAT, else text")
	fs.IntVar(&cfg.DuckDBThreads, "duckdb-threads", 0, "DuckDB threads; 0: half the cores, at least 1 (many small queries run side by side, each on its own connection)")
	fs.DurationVar(&cfg.Drain, "drain", DefaultDrain, "on SIGTERM, how long to keep answering while gRPC health reports NOT_SERVING, so balancers stop sending first (0: stop at once)")
	fs.DurationVar(&cfg.MinPositionTimeout, "min-position-timeout", engine.DefaultMinPositionTimeout, "how long a query waits for the position a reader asks for with Spice-Min-Position")
	fs.Var(mem, "memory-limit", "memory the runtime may use, such as 2GiB; auto: the container's cgroup limit, else half the RAM. DuckDB gets half, the caches and results bounded shares (docs/operations.md, Limits)")
	fs.IntVar(&cfg.MaxQueryBytes, "max-query-bytes", engine.DefaultMaxQueryBytes, "longest query text accepted, over HTTP and Flight alike")
	fs.Int64Var(&cfg.MaxResultBytes, "max-result-bytes", duckdb.DefaultMaxResultBytes, "largest result (Arrow bytes); at most 1/32 of --memory-limit")
	fs.DurationVar(&cfg.QueryTimeout, "query-timeout", engine.DefaultQueryTimeout, "how long a query may take from its arrival, waiting for a slot included")
	fs.IntVar(&cfg.QuerySlots, "query-slots", 0, "queries run at once (DuckDB connections); 0: 2 per core, at least 4. Heavy queries get at most half")
	fs.DurationVar(&cfg.QueueTimeout, "queue-timeout", engine.DefaultQueueTimeout, "how long a query waits for a slot before it is refused with 503")
	fs.DurationVar(&cfg.LightBudget, "light-budget", engine.DefaultLightBudget, "how long a query may run in a light slot; then it moves to the heavy lane, or is stopped and queued there, and its text counts as heavy until a run ends within it")
	fs.DurationVar(&cfg.HTTPReadTimeout, "http-read-timeout", httpsrv.DefaultReadTimeout, "how long reading one HTTP request (body included) may take")
	fs.Func("allowed-paths", "`dirs`: comma-separated directories whose files spicepods may read (file:, duckdb_open, sql_ref) besides their own folder; symlinks are resolved before the check",
		func(v string) error {
			cfg.AllowedPaths = append(cfg.AllowedPaths, strings.Split(v, ",")...)
			return nil
		})
	fs.BoolVar(&cfg.PrintVersion, "version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: dataruntime [flags]
       dataruntime healthcheck [--url http://127.0.0.1:8090/v1/ready] [--ca-file ca.pem]
       dataruntime drop-slots [--spicepod spicepod.yaml] [--instance-id ID]
       dataruntime drop-slots --inactive [--spicepod spicepod.yaml] [--settle 10s]

Serves one spicepod: accelerates its datasets in embedded DuckDB and answers
Arrow Flight SQL, plain Flight and the Spice HTTP API. docs/configuration.md
lists the flags of the subcommands too.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(stderr, "\nEnvironment:\n")
		docgen.PrintVars(stderr, runtimeEnv)
	}
	return fs
}

// levelValue is --log-level: a slog.Level read by logging.ParseLevel.
type levelValue struct{ l *slog.Level }

func (v levelValue) String() string {
	if v.l == nil {
		return ""
	}
	return strings.ToLower(v.l.String())
}

func (v levelValue) Set(s string) (err error) { *v.l, err = logging.ParseLevel(s); return err }

// formatValue is --log-format: text or json.
type formatValue struct{ f *string }

func (v formatValue) String() string {
	if v.f == nil {
		return ""
	}
	return *v.f
}

func (v formatValue) Set(s string) (err error) { *v.f, err = logging.ParseFormat(s); return err }

// healthcheck probes a URL and exits 0 on 200: Docker health checks in an image
// without a shell or curl.
func healthcheck(args []string, stderr io.Writer) int {
	var url, caFile string
	if err := healthcheckFlags(&url, &caFile, stderr).Parse(args); err != nil {
		return 2
	}
	client := http.Client{Timeout: 3 * time.Second}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		pool := x509.NewCertPool()
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			fmt.Fprintf(stderr, "healthcheck: --ca-file %s: no PEM certificate could be read (%v)\n", caFile, err)
			return 2
		}
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	}
	resp, err := client.Get(url)
	if err != nil {
		fmt.Fprintln(stderr, "healthcheck:", err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "healthcheck: %s: %s %s\n", url, resp.Status, strings.TrimSpace(string(body)))
		return 1
	}
	return 0
}

// healthcheckFlags returns the flag set of `dataruntime healthcheck`.
func healthcheckFlags(url, caFile *string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(url, "url", "http://127.0.0.1:8090/v1/ready", "URL that must answer 200")
	fs.StringVar(caFile, "ca-file", "", "PEM file of the CA that signs an https URL's certificate; empty: the system's roots")
	return fs
}
