//go:build duckdb_arrow

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/flightsqlsrc"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres/cdc"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/spiceai"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/httpsrv"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
	"github.com/cqrs-spice/cqrs/internal/version"
)

// Config is the command line.
type Config struct {
	Spicepod    string
	HTTPAddr    string
	FlightAddr  string
	MetricsAddr string
	DataDir     string
	InstanceID  string
	// LogLevel and LogFormat ("text" or "json") shape the logger run builds;
	// Main itself uses the Logger it is given.
	LogLevel  slog.Level
	LogFormat string
	// MinPositionTimeout bounds waits for Spice-Min-Position; engine default when 0.
	MinPositionTimeout time.Duration
	// DuckDBThreads is DuckDB's thread count; 0 means duckdb.DefaultThreads().
	DuckDBThreads int
	// Drain is how long the runtime keeps answering after SIGTERM while its
	// gRPC health says NOT_SERVING, so balancers move away first (see Main.Drain).
	Drain time.Duration
	// MemoryLimit bounds the process (see budget); 0 derives it from the cgroup
	// limit, else half the RAM.
	MemoryLimit int64
	// MaxQueryBytes bounds a query text over HTTP and Flight; engine default when 0.
	MaxQueryBytes int
	// MaxResultBytes bounds one result; duckdb.DefaultMaxResultBytes when 0, and
	// at most 1/32 of MemoryLimit.
	MaxResultBytes int64
	// QueryTimeout bounds a query from its arrival; engine default when 0.
	QueryTimeout time.Duration
	// QuerySlots bounds concurrent queries (DuckDB connections); duckdb default
	// when 0.
	QuerySlots int
	// QueueTimeout bounds the wait for a query slot; engine default when 0.
	QueueTimeout time.Duration
	// LightBudget bounds a query's run in a light slot; engine default when 0.
	LightBudget time.Duration
	// HTTPReadTimeout bounds reading one HTTP request; httpsrv default when 0.
	HTTPReadTimeout time.Duration
	// AllowedPaths are directories beyond the spicepod's own whose files it
	// may read (spicepod.Paths); empty: its own folder only.
	AllowedPaths []string
	// PrintVersion (--version): print the version and exit instead of serving.
	PrintVersion bool
}

// Main is the composition root: the only place that knows every implementation.
// Tests drive it in-process with Run and Close.
type Main struct {
	Config Config
	// Logger is handed to every component; nil means slog.Default().
	Logger *slog.Logger

	Pod     *spicepod.Pod
	Store   *duckdb.DB
	Engine  *engine.Engine
	HTTP    *httpsrv.Server
	Flight  *flightsrv.Server
	budget  budget
	servers []func(context.Context) error // closed first, in reverse order of opening
	sources []engine.Source
	metrics *http.Server
	reg     *prometheus.Registry
}

// NewMain returns a Main for cfg.
func NewMain(cfg Config, logger *slog.Logger) *Main {
	return &Main{Config: cfg, Logger: logger}
}

// Run loads the spicepod, opens the store, starts the servers and the engine, and
// returns; datasets keep loading in the background.
func (m *Main) Run(ctx context.Context) error {
	if m.Logger == nil {
		m.Logger = slog.Default()
	}
	allowed, err := spicepod.AllowedDirs(m.Config.AllowedPaths)
	if err != nil {
		return fmt.Errorf("--allowed-paths: %w", err)
	}
	pod, err := spicepod.LoadWith(m.Config.Spicepod, spicepod.Options{Lookup: spicepod.EnvLookup, AllowedDirs: allowed})
	if err != nil {
		return err
	}
	m.Pod = pod
	m.reg = prometheus.NewRegistry()
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	m.budget = m.memoryBudget()
	if err := m.openStore(ctx); err != nil {
		return err
	}
	e := engine.New(m.Store)
	m.Store.Relations = e.Tables // what SHOW TABLES and information_schema list
	e.Logger = m.Logger
	e.Metrics = engine.NewMetrics(m.reg)
	e.MinPositionTimeout = m.Config.MinPositionTimeout
	e.QueryTimeout = m.Config.QueryTimeout
	e.MaxQueryBytes = m.Config.MaxQueryBytes
	e.PlanCacheBytes = m.budget.PlanCache
	e.Admission = engine.Admission{Slots: m.Store.MaxConns, QueueTimeout: m.Config.QueueTimeout, LightBudget: m.Config.LightBudget}
	if rc := pod.Runtime.ResultsCache; rc.Enabled {
		size := rc.CacheMaxSize
		if size <= 0 || size > m.budget.ResultsCache {
			if size > m.budget.ResultsCache {
				m.Logger.Warn("results cache_max_size exceeds the memory budget; lowered", "cache_max_size", size,
					"bytes", m.budget.ResultsCache, "memory_limit", m.budget.Limit)
			}
			size = m.budget.ResultsCache
		}
		e.Cache = engine.NewCache(size, rc.ItemTTL)
		e.Cache.Metrics = e.Metrics
	}
	m.Engine = e
	if err := m.addDatasets(ctx); err != nil {
		return err
	}
	if err := m.addFeeds(ctx); err != nil {
		return err
	}
	for _, v := range pod.Views {
		if err := e.AddView(v); err != nil {
			return err
		}
	}
	if err := m.openServers(); err != nil {
		return err
	}
	if err := e.Open(ctx); err != nil {
		return fmt.Errorf("start engine: %w", err)
	}
	m.Logger.Info("runtime started", "version", version.Version, "spicepod", pod.Name, "datasets", len(pod.Datasets), "views", len(pod.Views),
		"http", m.HTTP.Addr(), "flight", m.Flight.Addr(), "metrics", m.Config.MetricsAddr)
	return nil
}

// memoryBudget splits the memory limit (see budget) and sets Go's soft memory
// limit unless GOMEMLIMIT is set.
func (m *Main) memoryBudget() budget {
	limit, source := m.Config.MemoryLimit, "--memory-limit"
	if limit <= 0 {
		limit, source = detectMemoryLimit()
	}
	maxResult := m.Config.MaxResultBytes
	if maxResult <= 0 {
		maxResult = duckdb.DefaultMaxResultBytes
	}
	b := newBudget(limit, source, maxResult)
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(b.GoSoft)
	}
	m.Logger.Info("memory budget", "limit", b.Limit, "from", b.Source, "duckdb", b.DuckDB, "go_soft_limit", b.GoSoft,
		"results_cache", b.ResultsCache, "max_result", b.MaxResultBytes)
	return b
}

// openStore opens DuckDB in memory, or in a file under DataDir when any dataset
// asks for mode: file (memory-mode datasets in it are reloaded at start anyway).
func (m *Main) openStore(ctx context.Context) error {
	path := ""
	for _, d := range m.Pod.Datasets {
		if d.Accelerated() && d.Acceleration.Mode == spicepod.ModeFile {
			if err := os.MkdirAll(m.Config.DataDir, 0o755); err != nil {
				return fmt.Errorf("create data directory: %w", err)
			}
			path = filepath.Join(m.Config.DataDir, m.Pod.Name+".duckdb")
			break
		}
	}
	m.Store = duckdb.New(path)
	m.Store.Logger = m.Logger
	m.Store.Threads = m.Config.DuckDBThreads
	m.Store.MemoryLimit = m.budget.DuckDB
	m.Store.MaxResultBytes = m.budget.MaxResultBytes
	m.Store.InspectCacheBytes = m.budget.InspectCache
	m.Store.MaxConns = m.Config.QuerySlots
	if m.Config.QueryTimeout > 0 {
		m.Store.QueryTimeout = m.Config.QueryTimeout
	}
	if err := m.Store.Open(ctx); err != nil {
		return err
	}
	return nil
}

// addDatasets builds each dataset's connector: an explicit switch on from:.
func (m *Main) addDatasets(ctx context.Context) error {
	for _, d := range m.Pod.Datasets {
		src, err := m.source(ctx, d)
		if err != nil {
			return fmt.Errorf("dataset %s: %w", d.Name, err)
		}
		if err := m.Engine.AddDataset(d, src); err != nil {
			return err
		}
	}
	return nil
}

func (m *Main) source(ctx context.Context, d spicepod.Dataset) (engine.Source, error) {
	scheme, path := d.Connector()
	streams := d.Accelerated() && d.Acceleration.RefreshMode.Streams()
	if streams && scheme != "postgres" && scheme != "flightsql" && scheme != "spice.ai" {
		return nil, fmt.Errorf("refresh_mode: changes needs a postgres: source (logical replication) or a flightsql: or spice.ai: source (a subscription to the upstream runtime); %s: sources support full and append", scheme)
	}
	switch scheme {
	case "postgres":
		cfg, err := postgres.ParseParams(d.Params)
		if err != nil {
			return nil, err
		}
		if d.Accelerated() && d.Acceleration.RefreshMode.Streams() {
			return nil, nil // served by a change feed (addFeeds)
		}
		src := postgres.NewSource(cfg, path)
		src.Logger = m.Logger.With("dataset", d.Name)
		if err := src.Open(ctx); err != nil {
			return nil, err
		}
		m.sources = append(m.sources, src)
		return src, nil
	case "flightsql":
		cfg, err := flightsqlsrc.ParseParams(d.Params)
		if err != nil {
			return nil, err
		}
		src := flightsqlsrc.NewSource(cfg, path)
		src.Logger = m.Logger.With("dataset", d.Name)
		if err := src.Open(ctx); err != nil {
			return nil, err
		}
		m.sources = append(m.sources, src)
		if streams {
			m.subscribe(d, src)
			return nil, nil // served by the subscription's feed
		}
		return src, nil
	case "spice.ai":
		cfg, err := spiceai.ParseParams(d.Params)
		if err != nil {
			return nil, err
		}
		src := spiceai.NewSource(cfg, spiceai.TablePath(path, d.Name))
		if err := src.Open(ctx); err != nil {
			return nil, err
		}
		m.sources = append(m.sources, src)
		if streams {
			m.subscribe(d, src)
			return nil, nil // served by the subscription's feed
		}
		return src, nil
	default:
		return m.localSource(ctx, d, scheme, path)
	}
}

// subscribe adds the feed that keeps a refresh_mode: changes dataset of a
// flightsql: or spice.ai: source in step by subscription (falling back to
// change notices and whole reads where the upstream has no subscriptions).
func (m *Main) subscribe(d spicepod.Dataset, up flightsqlsrc.Upstream) {
	name := strings.ToLower(d.Name)
	f := flightsqlsrc.NewFeed(m.Engine, name, m.withOrder(name, up))
	f.Logger = m.Logger
	f.RefreshInterval = d.Acceleration.RefreshCheckInterval
	m.Engine.AddFeed(f)
}

// postgresDatasets are the datasets of a postgres: source, the ones logical
// replication may serve.
func postgresDatasets(ds []spicepod.Dataset) []spicepod.Dataset {
	var out []spicepod.Dataset
	for _, d := range ds {
		if scheme, _ := d.Connector(); scheme == "postgres" {
			out = append(out, d)
		}
	}
	return out
}

// addFeeds starts one logical replication feed per source database of the
// refresh_mode: changes datasets of postgres: sources.
func (m *Main) addFeeds(ctx context.Context) error {
	instance, err := resolveInstance(ctx, m.Config.InstanceID, m.Logger)
	if err != nil {
		return err
	}
	cfgs, err := cdc.Configs(m.Pod.Name, instance, postgresDatasets(m.Pod.Datasets))
	if err != nil {
		return err
	}
	metrics := cdc.NewMetrics(m.reg)
	for _, c := range cfgs {
		f := cdc.New(m.Engine, m.Store, c)
		f.Logger, f.Metrics = m.Logger, metrics // the feed names its slot on each line
		m.Engine.AddFeed(f)
	}
	return nil
}

func (m *Main) openServers() error {
	keys, tlsConfig, err := m.security()
	if err != nil {
		return err
	}
	// One budget of wrong keys per address, whichever port they go to.
	throttle := &apikey.Throttle{Logger: m.Logger}
	m.HTTP = httpsrv.New(m.Config.HTTPAddr, m.Engine)
	m.HTTP.Logger = m.Logger
	m.HTTP.APIKeys, m.HTTP.TLS, m.HTTP.Throttle = keys, tlsConfig, throttle
	m.HTTP.MaxQueryBytes = m.Config.MaxQueryBytes
	m.HTTP.ReadTimeout = m.Config.HTTPReadTimeout
	m.HTTP.Spicepods = []httpsrv.Spicepod{podListing(m.Pod)}
	if err := m.HTTP.Open(); err != nil {
		return err
	}
	m.HTTP.Endpoints = []httpsrv.Endpoint{{Name: "http", Addr: m.HTTP.Addr()}}
	m.servers = append(m.servers, m.HTTP.Close)
	m.Flight = flightsrv.New(m.Config.FlightAddr, m.Engine)
	m.Flight.Logger = m.Logger
	m.Flight.Metrics = flightsrv.NewMetrics(m.reg)
	m.Flight.PrimaryKeys = m.primaryKeys
	m.Flight.Ordering = m.ordering
	m.Flight.ParamTypes = m.Store.ParamTypes
	m.Flight.APIKeys, m.Flight.Throttle = keys, throttle
	if tlsConfig != nil {
		m.Flight.GRPCOptions = append(m.Flight.GRPCOptions, grpc.Creds(credentials.NewTLS(tlsConfig)))
	}
	m.Flight.Ready = m.Engine.Ready
	m.Flight.MaxTicketBytes = min(m.budget.Tickets, flightsrv.DefaultMaxTicketBytes)
	m.Flight.MaxPreparedBytes = m.budget.Prepared
	if err := m.Flight.Open(); err != nil {
		return err
	}
	m.servers = append(m.servers, m.Flight.Close)
	m.HTTP.Endpoints = append(m.HTTP.Endpoints, httpsrv.Endpoint{Name: "flight", Addr: m.Flight.Addr()})
	if m.Config.MetricsAddr != "" {
		ln, err := net.Listen("tcp", m.Config.MetricsAddr)
		if err != nil {
			return fmt.Errorf("listen metrics on %s: %w", m.Config.MetricsAddr, err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
		// Upstream's /v1/status probes its metrics port with GET /health.
		mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "OK") })
		// Profiles on the operator's port only, never on the public API ports.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		m.metrics = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = m.metrics.Serve(ln) }()
		m.HTTP.Endpoints = append(m.HTTP.Endpoints, httpsrv.Endpoint{Name: "metrics", Addr: ln.Addr().String()})
		m.servers = append(m.servers, m.metrics.Shutdown)
	}
	return nil
}

// security returns the API keys both ports require (none: open) and their TLS
// configuration (nil: plaintext), from the spicepod's runtime.auth and runtime.tls.
func (m *Main) security() ([]apikey.Key, *tls.Config, error) {
	var keys []apikey.Key
	readWrite := 0
	if a := m.Pod.Runtime.Auth.APIKey; a.Enabled {
		for _, k := range a.Keys {
			access := apikey.ReadOnly
			if k.ReadWrite {
				access = apikey.ReadWrite
				readWrite++
			}
			keys = append(keys, apikey.Key{Secret: k.Key, Access: access})
		}
	}
	t := m.Pod.Runtime.TLS
	m.Logger.Info("security", "api_keys", len(keys), "read_write_keys", readWrite, "tls", t.Enabled)
	if !t.Enabled {
		return keys, nil, nil
	}
	pair, err := t.KeyPair()
	if err != nil {
		return nil, nil, fmt.Errorf("runtime.tls: %w", err)
	}
	return keys, &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// primaryKeys answers Flight SQL GetPrimaryKeys from the spicepod.
func (m *Main) primaryKeys(table string) []string {
	for _, d := range m.Pod.Datasets {
		if d.Name == table && d.Acceleration != nil {
			return d.Acceleration.PrimaryKey
		}
	}
	return nil
}

// Close stops the servers first (no new requests), then the engine, then the
// sources and the store, within 15 seconds.
func (m *Main) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var errs []error
	for i := len(m.servers) - 1; i >= 0; i-- {
		errs = append(errs, m.servers[i](ctx))
	}
	if m.Engine != nil {
		errs = append(errs, m.Engine.Close(ctx))
	}
	for _, s := range m.sources {
		s.Close()
	}
	if m.Store != nil {
		errs = append(errs, m.Store.Close())
	}
	return errors.Join(errs...)
}

// podListing is the spicepod as GET /v1/spicepods lists it: names and
// sources, never params.
func podListing(p *spicepod.Pod) httpsrv.Spicepod {
	out := httpsrv.Spicepod{Version: p.Version, Name: p.Name}
	for _, d := range p.Datasets {
		out.Datasets = append(out.Datasets, httpsrv.PodDataset{From: d.From, Name: d.Name})
	}
	for _, v := range p.Views {
		out.Views = append(out.Views, httpsrv.PodView{Name: v.Name})
	}
	return out
}
