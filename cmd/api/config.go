package main

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/app/api"
	"github.com/cqrs-spice/cqrs/internal/app/live"
	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/docgen"
	"github.com/cqrs-spice/cqrs/internal/logging"
)

// Defaults of the settings that have no home in a package.
const (
	DefaultPostgresURL      = "postgres://postgres:postgres@localhost:5432/postgres?sslmode=disable"
	DefaultAcceleratedAddr  = "localhost:50051"
	DefaultMaterializedAddr = "localhost:50052"

	// DefaultPoolSize lets `oha -n20000 -c100` run against /ranking without an
	// error: 100 concurrent requests share 20 connections, the rest queue on the
	// pool for up to POSTGRES_ACQUIRE_TIMEOUT. More connections than cores only
	// make Postgres slower; the recipe's unbounded pool ran into max_connections.
	DefaultPoolSize = 20

	// DefaultWritePoolSize sizes the pool of POST /orders, which is separate so
	// that a flood of /ranking never starves writes. Inserts are short: a few
	// connections carry hundreds of orders a second.
	DefaultWritePoolSize = 8

	DefaultShutdownTimeout = 10 * time.Second

	// DefaultConnectTimeout bounds making one Postgres connection, unless
	// POSTGRES_URL sets connect_timeout.
	DefaultConnectTimeout = 10 * time.Second
)

// Config is the api's configuration, read from the environment.
type Config struct {
	Addr        string
	PostgresURL string
	// PostgresPassword is set on PostgresURL when the URL carries no password,
	// so the password can come from a secret of its own (POSTGRES_PASSWORD); it
	// wins over libpq's PGPASSWORD and passfile.
	PostgresPassword string
	PoolSize         int
	WritePoolSize    int
	AcquireTimeout   time.Duration
	QueryTimeout     time.Duration
	AcceleratedAddr  string
	MaterializedAddr string
	RuntimeTimeout   time.Duration
	RuntimeProtocol  string
	RuntimeCoalesce  bool
	RequestTimeout   time.Duration
	ShutdownTimeout  time.Duration
	TrustedProxies   []string
	WriteKey         string        // API_WRITE_KEY; empty: POST /orders is open
	DebugAddr        string        // pprof; empty: off
	MetricsAddr      string        // Prometheus GET /metrics; empty: off
	LiveInterval     time.Duration // the live page's sampling interval; 0: no page
	LiveMaxViewers   int           // live pages served at once
	AllowedHosts     []string      // host names browsers may reach the api by, beyond addresses and localhost
	LogLevel         slog.Level
	LogFormat        string // "text" or "json"

	// AcceleratedAPIKey and MaterializedAPIKey are sent to the runtimes; empty:
	// none (a runtime without runtime.auth).
	AcceleratedAPIKey, MaterializedAPIKey string
	// AcceleratedTLS and MaterializedTLS: how the runtimes' Flight ports are
	// dialled; plaintext by default.
	AcceleratedTLS, MaterializedTLS FlightTLS
}

// envVar is one setting: its variable, default and meaning, for LoadConfig and
// for --help alike.
type envVar struct {
	name, def, help string
	set             func(c *Config, v string) error
}

var envVars = slices.Concat(connVars,
	tlsVars(acceleratedTLSVars, "accelerated runtime", func(c *Config) *FlightTLS { return &c.AcceleratedTLS }),
	tlsVars(materializedTLSVars, "materialized runtime", func(c *Config) *FlightTLS { return &c.MaterializedTLS }),
	tuningVars)

// connVars say where the api's dependencies are.
var connVars = []envVar{
	{"API_ADDR", api.DefaultAddr, "address the api listens on",
		func(c *Config, v string) error { c.Addr = v; return nil }},
	{"POSTGRES_URL", DefaultPostgresURL, "Postgres connection string (URL or key=value)",
		func(c *Config, v string) error { c.PostgresURL = v; return nil }},
	{"POSTGRES_PASSWORD", "", "Postgres password for a POSTGRES_URL without one, before libpq's PGPASSWORD (the compose stack's comes from secrets.env); the start line names the source used",
		func(c *Config, v string) error { c.PostgresPassword = v; return nil }},
	{"POSTGRES_POOL_SIZE", strconv.Itoa(DefaultPoolSize), "most connections to Postgres for GET /ranking; further requests queue",
		func(c *Config, v string) (err error) { c.PoolSize, err = positiveInt(v); return err }},
	{"POSTGRES_WRITE_POOL_SIZE", strconv.Itoa(DefaultWritePoolSize), "most connections to Postgres for POST /orders, apart from the ranking's",
		func(c *Config, v string) (err error) { c.WritePoolSize, err = positiveInt(v); return err }},
	{"POSTGRES_ACQUIRE_TIMEOUT", orders.DefaultAcquireTimeout.String(), "longest wait for a pooled connection before answering 503",
		func(c *Config, v string) (err error) { c.AcquireTimeout, err = duration(v); return err }},
	{"POSTGRES_QUERY_TIMEOUT", orders.DefaultQueryTimeout.String(), "longest a Postgres call may take once connected",
		func(c *Config, v string) (err error) { c.QueryTimeout, err = duration(v); return err }},
	{"ACCELERATED_FLIGHT_ADDR", DefaultAcceleratedAddr, "host:port of the accelerated runtime's Flight (and Flight SQL) endpoint",
		func(c *Config, v string) (err error) {
			c.AcceleratedAddr, err = flightAddr(v, acceleratedTLSVars.on)
			return err
		}},
	{"MATERIALIZED_FLIGHT_ADDR", DefaultMaterializedAddr, "host:port of the materialized runtime's Flight (and Flight SQL) endpoint",
		func(c *Config, v string) (err error) {
			c.MaterializedAddr, err = flightAddr(v, materializedTLSVars.on)
			return err
		}},
	{"ACCELERATED_API_KEY", "", "API key of the accelerated runtime (one of its runtime.auth.api-key.keys); empty: send none",
		func(c *Config, v string) error { c.AcceleratedAPIKey = v; return nil }},
	{"MATERIALIZED_API_KEY", "", "API key of the materialized runtime; empty: send none",
		func(c *Config, v string) error { c.MaterializedAPIKey = v; return nil }},
}

// tuningVars are the rest.
var tuningVars = []envVar{
	{"RUNTIME_QUERY_TIMEOUT", ranking.DefaultTimeout.String(), "longest a runtime query may take (keep it above the runtime's 10s min-position wait)",
		func(c *Config, v string) (err error) { c.RuntimeTimeout, err = duration(v); return err }},
	{"RUNTIME_PROTOCOL", ranking.ProtocolFlight, "how the api reads a runtime: flight (one DoGet whose ticket is the SQL) or flightsql (GetFlightInfo, then DoGet, as the recipe's driver)",
		func(c *Config, v string) error {
			if v != ranking.ProtocolFlight && v != ranking.ProtocolFlightSQL {
				return fmt.Errorf("want %s or %s", ranking.ProtocolFlight, ranking.ProtocolFlightSQL)
			}
			c.RuntimeProtocol = v
			return nil
		}},
	{"RUNTIME_COALESCE", "true", "true: concurrent reads of a runtime share calls (those arriving while a call runs wait for the next one, which answers them all); false: one call per read",
		func(c *Config, v string) (err error) { c.RuntimeCoalesce, err = strconv.ParseBool(v); return err }},
	{"API_REQUEST_TIMEOUT", api.DefaultRequestTimeout.String(), "longest a request may take",
		func(c *Config, v string) (err error) { c.RequestTimeout, err = duration(v); return err }},
	{"API_SHUTDOWN_TIMEOUT", DefaultShutdownTimeout.String(), "how long requests in flight may finish on SIGINT/SIGTERM",
		func(c *Config, v string) (err error) { c.ShutdownTimeout, err = duration(v); return err }},
	{"API_TRUSTED_PROXIES", strings.Join(api.DefaultTrustedProxies, ","), "CIDRs of proxies whose X-Forwarded-For the request log believes",
		func(c *Config, v string) error { c.TrustedProxies = splitList(v); return nil }},
	{"API_WRITE_KEY", "", "when set, POST /orders needs this value in the X-API-Key header (401 without); off when empty",
		func(c *Config, v string) error { c.WriteKey = v; return nil }},
	{"API_LIVE_INTERVAL", live.DefaultInterval.String(), "how often the live page (GET /live) samples the three rankings while a browser has it open; 0 switches the page off",
		func(c *Config, v string) (err error) {
			if c.LiveInterval, err = time.ParseDuration(v); err != nil || c.LiveInterval < 0 {
				return fmt.Errorf("want a duration like 300ms, or 0 for no page")
			}
			return nil
		}},
	{"API_LIVE_MAX_VIEWERS", strconv.Itoa(live.DefaultMaxViewers), "most live pages (GET /live/events) served at once; past it a page gets 503 and retries",
		func(c *Config, v string) (err error) { c.LiveMaxViewers, err = positiveInt(v); return err }},
	{"API_ALLOWED_HOSTS", "", "comma-separated host names a browser may reach the api by (its Host header), besides IP addresses and localhost; requests from a browser to any other name get 403 (DNS rebinding)",
		func(c *Config, v string) error { c.AllowedHosts = splitList(v); return nil }},
	{"API_DEBUG_ADDR", "", "address for Go's pprof profiles (/debug/pprof/); off when empty. Keep it off public interfaces",
		func(c *Config, v string) error { c.DebugAddr = v; return nil }},
	{"API_METRICS_ADDR", "", "address for Prometheus metrics (GET /metrics: the process's CPU seconds and memory, Go runtime); off when empty. The benchmark reads the api's CPU here",
		func(c *Config, v string) error { c.MetricsAddr = v; return nil }},
	{"LOG_LEVEL", "info", logging.Levels + "; debug logs every request, info only failures (5xx)",
		func(c *Config, v string) (err error) { c.LogLevel, err = logging.ParseLevel(v); return err }},
	{"LOG_FORMAT", "text", logging.Formats + " (one JSON object a line)",
		func(c *Config, v string) (err error) { c.LogFormat, err = logging.ParseFormat(v); return err }},
}

// LoadConfig reads the configuration through getenv (os.Getenv); unset or empty
// variables take their defaults. Errors name the variable and the expected form.
func LoadConfig(getenv func(string) string) (Config, error) {
	var c Config
	for _, e := range envVars {
		v := strings.TrimSpace(getenv(e.name))
		if v == "" {
			v = e.def
		}
		if err := e.set(&c, v); err != nil {
			return Config{}, fmt.Errorf("%s=%q: %w", e.name, v, err)
		}
	}
	if err := c.AcceleratedTLS.check("ACCELERATED"); err != nil {
		return Config{}, err
	}
	if err := c.MaterializedTLS.check("MATERIALIZED"); err != nil {
		return Config{}, err
	}
	return c, nil
}

// printUsage writes the help text: commands and every variable with its default.
func printUsage(w io.Writer) {
	fmt.Fprint(w, `api serves the CQRS recipe: orders into Postgres, the top-5 ranking from
Postgres and from the accelerated and materialized runtimes.

Usage:
  api                                   serve until SIGINT or SIGTERM
  api healthcheck [--url URL] [--timeout 3s]
                                        exit 0 when URL answers 200
                                        (default http://127.0.0.1:<API_ADDR port>/healthz)
  api --help                            this text
  api --version                         the version

Endpoints: POST /orders, GET /ranking, /ranking-accelerated, /ranking-materialized,
/healthz, /readyz, /noop.

Environment:
`)
	docgen.PrintVars(w, envDocs())
}

// envDocs is the environment the api reads, for --help and the docs.
func envDocs() []docgen.Var {
	out := make([]docgen.Var, len(envVars))
	for i, e := range envVars {
		out[i] = docgen.Var{Name: e.name, Default: e.def, Usage: e.help}
	}
	return out
}

func positiveInt(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("want a positive integer")
	}
	return n, nil
}

func duration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive duration like 5s or 500ms")
	}
	return d, nil
}

// flightAddr accepts host:port, optionally written as a plaintext URL
// (grpc://, grpc+tcp://, http://) as spicepods write Flight endpoints. TLS is
// the setting tlsVar, not a scheme.
func flightAddr(v, tlsVar string) (string, error) {
	for _, scheme := range []string{"grpc://", "grpc+tcp://", "http://"} {
		v = strings.TrimPrefix(v, scheme)
	}
	v = strings.TrimSuffix(v, "/")
	if strings.Contains(v, "://") {
		return "", fmt.Errorf("want host:port of a Flight endpoint (grpc:// may precede it); for TLS write host:port and set %s=true", tlsVar)
	}
	if i := strings.LastIndex(v, ":"); i <= 0 || i == len(v)-1 {
		return "", fmt.Errorf("want host:port, like accelerated:50051")
	}
	return v, nil
}

func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("want true or false")
	}
	return b, nil
}

func splitList(v string) []string {
	list := []string{}
	for part := range strings.SplitSeq(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			list = append(list, part)
		}
	}
	return list
}
