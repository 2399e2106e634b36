// Command api serves the CQRS recipe over HTTP: it writes orders to Postgres and
// reads the top-5 ranking from Postgres and from the two runtimes over Arrow Flight.
// It is configured by environment variables; `api --help` lists them.
package main

import (
	"github.com/cqrs-spice/cqrs/internal/logging"

	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cqrs-spice/cqrs/internal/app/api"
	"github.com/cqrs-spice/cqrs/internal/app/live"
	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/app/replicas"
	"github.com/cqrs-spice/cqrs/internal/version"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "healthcheck":
			return healthcheck(args[1:], os.Getenv, stderr)
		case "-h", "-help", "--help", "help":
			printUsage(stdout)
			return 0
		case "-version", "--version", "version":
			fmt.Fprintln(stdout, "api", version.Version)
			return 0
		default:
			fmt.Fprintf(stderr, "api: unknown argument %q\n\n", args[0])
			printUsage(stderr)
			return 2
		}
	}
	cfg, err := LoadConfig(os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "api: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	m := NewMain()
	m.Config = cfg
	m.Logger = logging.New(cfg.LogLevel, cfg.LogFormat, stderr)
	if err := m.Run(ctx); err != nil {
		m.Logger.Error("start", logging.ErrorKey, err)
		_ = m.Close()
		return 1
	}
	<-ctx.Done()
	stop() // a second signal ends the process at once
	m.Logger.Info("shutting down", "grace", cfg.ShutdownTimeout)
	if err := m.Close(); err != nil {
		m.Logger.Error("shut down", logging.ErrorKey, err)
		return 1
	}
	return 0
}

// The implementations wired below satisfy the api's interfaces.
var (
	_ api.OrderStore    = (*orders.Store)(nil)
	_ api.RankingReader = (*orders.Store)(nil)
	_ api.RankingReader = (*ranking.Flight)(nil)
	_ api.RankingReader = (*replicas.Pool)(nil)
	_ replicas.Reader   = (*ranking.Flight)(nil)
)

// Main is the api process: the one place that knows every implementation and
// wires them together.
type Main struct {
	Config Config
	// Logger is handed to the server; nil means slog.Default().
	Logger *slog.Logger

	WritePool    *pgxpool.Pool // POST /orders
	ReadPool     *pgxpool.Pool // GET /ranking
	Orders       *orders.Store // on WritePool
	Postgres     *orders.Store // on ReadPool
	Accelerated  *replicas.Pool
	Materialized *replicas.Pool
	Server       *api.Server
	Live         *live.Hub // the live page; nil when API_LIVE_INTERVAL is 0
	// PasswordSource says where the Postgres password came from (Password*),
	// set by Run and logged in its start line.
	PasswordSource string

	debug   *http.Server
	metrics *http.Server
}

// NewMain returns a Main with the default configuration.
func NewMain() *Main {
	cfg, _ := LoadConfig(func(string) string { return "" })
	return &Main{Config: cfg}
}

// Run opens the Postgres pools, the runtime clients and the HTTP server, and
// returns once the server listens. Nothing connects eagerly: a dependency that is
// down makes its endpoints answer 503 until it is back. Close undoes Run.
func (m *Main) Run(ctx context.Context) error {
	if m.Logger == nil {
		m.Logger = slog.Default()
	}
	cfg := m.Config
	pcfg, source, err := postgresConfig(cfg.PostgresURL, cfg.PostgresPassword)
	if err != nil {
		return err
	}
	m.PasswordSource = source
	// Orders and the Postgres ranking get a pool each: a burst of /ranking, which
	// aggregates every order, must never leave POST /orders waiting for a
	// connection (commands before queries, as CQRS intends).
	if m.WritePool, err = newPool(ctx, pcfg.Copy(), cfg.WritePoolSize, "cqrs-api-orders"); err != nil {
		return err
	}
	if m.ReadPool, err = newPool(ctx, pcfg.Copy(), cfg.PoolSize, "cqrs-api-ranking"); err != nil {
		return err
	}
	m.Orders = orders.NewStore(m.WritePool)
	m.Orders.PoolSetting = "POSTGRES_WRITE_POOL_SIZE"
	m.Postgres = orders.NewStore(m.ReadPool)
	m.Postgres.PoolSetting = "POSTGRES_POOL_SIZE"
	for _, st := range []*orders.Store{m.Orders, m.Postgres} {
		st.AcquireTimeout, st.QueryTimeout = cfg.AcquireTimeout, cfg.QueryTimeout
	}

	// Each runtime is a pool of its replicas (runtimes.go).
	if m.Accelerated, err = m.openRuntime("accelerated runtime", "ACCELERATED", cfg.AcceleratedAddr, cfg.AcceleratedAPIKey, cfg.AcceleratedTLS, ranking.AcceleratedQuery); err != nil {
		return err
	}
	if m.Materialized, err = m.openRuntime("materialized runtime", "MATERIALIZED", cfg.MaterializedAddr, cfg.MaterializedAPIKey, cfg.MaterializedTLS, ranking.MaterializedQuery); err != nil {
		return err
	}

	var store api.OrderStore = m.Orders
	if cfg.LiveInterval > 0 {
		if err := m.openLive(); err != nil {
			return err
		}
		store = m.Live.Orders(m.Orders)
	}
	// A minimum position Postgres has not reached is refused at once, as
	// GET /ranking refuses it, instead of waiting for a runtime's timeout.
	m.Server = api.NewServer(store, m.Postgres,
		&ranking.HeadCheck{Reader: m.Accelerated, Head: m.Orders.Head},
		&ranking.HeadCheck{Reader: m.Materialized, Head: m.Orders.Head})
	m.Server.Live = m.liveHandler()
	if m.Live != nil {
		m.Server.ConnContext = live.ConnContext
	}
	m.Server.AllowedHosts = cfg.AllowedHosts
	m.Server.Addr = cfg.Addr
	m.Server.RequestTimeout = cfg.RequestTimeout
	m.Server.TrustedProxies = cfg.TrustedProxies
	m.Server.WriteKey = cfg.WriteKey
	m.Server.Logger = m.Logger
	m.Server.Checks = []api.Check{
		// On the orders' pool: a flood of /ranking, which fills its own pool, must
		// not make the whole api look unready.
		{Name: "postgres", Ping: m.Orders.Ping},
		{Name: "accelerated", Ping: m.Accelerated.Ping},
		{Name: "materialized", Ping: m.Materialized.Ping},
	}
	if err := m.Server.Open(); err != nil {
		return err
	}
	if cfg.DebugAddr != "" {
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.Handle("GET /metrics", promhttp.Handler())
		if m.debug, err = m.serveAux("API_DEBUG_ADDR", cfg.DebugAddr, mux, "pprof and metrics listening"); err != nil {
			return err
		}
	}
	if cfg.MetricsAddr != "" {
		// The default registry holds the process collector
		// (process_cpu_seconds_total, resident memory) and the Go collector.
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.Handler())
		if m.metrics, err = m.serveAux("API_METRICS_ADDR", cfg.MetricsAddr, mux, "metrics listening"); err != nil {
			return err
		}
	}
	m.Logger.Info("api listening", "version", version.Version, "addr", m.Server.ListenAddr().String(),
		"postgres", m.Postgres.Addr(), "postgres_password", m.PasswordSource, "accelerated", cfg.AcceleratedAddr, "materialized", cfg.MaterializedAddr,
		"pool_size", cfg.PoolSize, "write_pool_size", cfg.WritePoolSize, "runtime_protocol", cfg.RuntimeProtocol,
		"write_key", cfg.WriteKey != "", "accelerated_tls", cfg.AcceleratedTLS.Enabled, "materialized_tls", cfg.MaterializedTLS.Enabled)
	return nil
}

// serveAux serves h on addr in the background, for pprof and metrics: apart
// from the api's own listener, so they never share its port or its timeouts.
func (m *Main) serveAux(setting, addr string, h http.Handler, msg string) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen on %s: %w", setting, addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	m.Logger.Info(msg, "addr", ln.Addr().String())
	return srv, nil
}

// Close stops the HTTP server, letting requests in flight finish for up to
// ShutdownTimeout, then closes the runtime clients and the pools.
func (m *Main) Close() error {
	var errs []error
	if m.Server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownTimeout)
		errs = append(errs, m.Server.Close(ctx))
		cancel()
	}
	for _, srv := range []*http.Server{m.debug, m.metrics} {
		if srv != nil {
			errs = append(errs, srv.Close())
		}
	}
	if m.Live != nil {
		errs = append(errs, m.Live.Close())
	}
	for _, f := range []*replicas.Pool{m.Accelerated, m.Materialized} {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	for _, p := range []*pgxpool.Pool{m.WritePool, m.ReadPool} {
		if p != nil {
			p.Close()
		}
	}
	return errors.Join(errs...)
}
