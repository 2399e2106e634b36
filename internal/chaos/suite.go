package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// PortVars are docker-compose.yml's host port variables, in the order Ports
// assigns them from a base port.
var PortVars = []string{"API_PORT", "POSTGRES_PORT", "ACCELERATED_HTTP_PORT", "ACCELERATED_FLIGHT_PORT",
	"ACCELERATED_METRICS_PORT", "MATERIALIZED_HTTP_PORT", "MATERIALIZED_FLIGHT_PORT", "MATERIALIZED_METRICS_PORT"}

// Ports maps each of PortVars to a host port.
type Ports map[string]int

// PortsFrom assigns base, base+1, ... to PortVars.
func PortsFrom(base int) Ports {
	p := Ports{}
	for i, v := range PortVars {
		p[v] = base + i
	}
	return p
}

// Env is the ports as compose environment.
func (p Ports) Env() []string {
	var env []string
	for _, v := range PortVars {
		env = append(env, fmt.Sprintf("%s=%d", v, p[v]))
	}
	sort.Strings(env)
	return env
}

// Suite is a chaos run's wiring: the stack on its ports and the clients.
type Suite struct {
	Stack     *Stack
	Ports     Ports
	Client    *Client
	Collector *Collector
	Logger    *slog.Logger
}

// NewSuite wires a stack of project in dir on ports. The runtimes' API keys
// and Postgres's password come from ACCELERATED_API_KEY, MATERIALIZED_API_KEY
// and POSTGRES_PASSWORD when set, else from dir's secrets.env, the file compose
// hands the services (make secrets).
func NewSuite(project, dir string, ports Ports, logger *slog.Logger) *Suite {
	c := NewClient(fmt.Sprintf("http://127.0.0.1:%d", ports["API_PORT"]))
	c.AcceleratedURL = fmt.Sprintf("http://127.0.0.1:%d", ports["ACCELERATED_HTTP_PORT"])
	c.MaterializedURL = fmt.Sprintf("http://127.0.0.1:%d", ports["MATERIALIZED_HTTP_PORT"])
	c.AcceleratedMetricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", ports["ACCELERATED_METRICS_PORT"])
	c.MaterializedMetricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", ports["MATERIALIZED_METRICS_PORT"])
	secrets := ReadEnvFile(filepath.Join(dir, "secrets.env"))
	key := func(name string) string {
		if v := os.Getenv(name); v != "" {
			return v
		}
		return secrets[name]
	}
	c.AcceleratedKey, c.MaterializedKey = key("ACCELERATED_API_KEY"), key("MATERIALIZED_API_KEY")
	pg := (&url.URL{Scheme: "postgres", User: url.UserPassword("postgres", key("POSTGRES_PASSWORD")),
		Host: fmt.Sprintf("127.0.0.1:%d", ports["POSTGRES_PORT"]), Path: "/postgres", RawQuery: "sslmode=disable"}).String()
	return &Suite{
		Stack:     &Stack{Project: project, Dir: dir, Env: ports.Env()},
		Ports:     ports,
		Client:    c,
		Collector: &Collector{Client: c, PostgresURL: pg},
		Logger:    logger,
	}
}

// SecretVars are the variables of secrets.env the stack's services need (the
// Makefile's SECRET_VARS).
var SecretVars = []string{"ACCELERATED_API_KEY", "MATERIALIZED_API_KEY", "POSTGRES_PASSWORD"}

// CheckSecrets reports the variables of SecretVars that dir's secrets.env
// lacks, so a run fails at once instead of with a service that cannot start.
func CheckSecrets(dir string) error {
	path := filepath.Join(dir, "secrets.env")
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("read secrets: %w; run make secrets in %s", err, dir)
	}
	vars := ReadEnvFile(path)
	var missing []string
	for _, v := range SecretVars {
		if vars[v] == "" {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s lacks %s: run make secrets, which adds what an older file lacks and keeps the rest",
			path, strings.Join(missing, ", "))
	}
	return nil
}

// Up starts the stack, or brings a running one up to date (compose recreates
// the containers whose image or settings changed, so a run after make images
// tests the new build), and waits until every service is healthy and the api
// ready.
func (s *Suite) Up(ctx context.Context, limit time.Duration) error {
	s.Logger.Info("starting the stack", "project", s.Stack.Project)
	if _, err := s.Stack.Run(ctx, "up", "-d", "--remove-orphans"); err != nil {
		return fmt.Errorf("start the stack: %w", err)
	}
	if err := s.Stack.WaitHealthy(ctx, limit, Services...); err != nil {
		return err
	}
	return poll(ctx, limit, "the api to be ready", func() bool { return s.ready(ctx) })
}

// FileModeFiles are the compose files of the stack with the accelerated
// runtime in mode: file, relative to the stack's directory.
var FileModeFiles = []string{"docker-compose.yml", "chaos/compose.file-mode.yml"}

// Down removes the stack with its volumes, those of mode: file included.
func (s *Suite) Down(ctx context.Context) error {
	files := append(slices.Clone(FileModeFiles), SlowLinkFiles[1:]...)
	_, err := s.Stack.WithFiles(files...).Run(ctx, "down", "-v", "--remove-orphans")
	return err
}

func (s *Suite) ready(ctx context.Context) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Client.API+"/readyz", nil)
	resp, err := s.Client.HTTP.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Options are a run's settings.
type Options struct {
	Faults         []Fault
	WriteRate      float64
	ReadersPerPath int
	Warmup         time.Duration
	Settle         time.Duration
	RecoverTimeout time.Duration
	// LoadRate is the load rounds' rate, for the report's settings line (the
	// faults carry it; DefaultLoadRate when zero).
	LoadRate float64
}

// Run runs every fault in turn against the (started) stack.
func (s *Suite) Run(ctx context.Context, o Options) (Report, error) {
	products, err := s.Collector.Products(ctx)
	if err != nil {
		return Report{}, err
	}
	var ids []int64
	for id := range products {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return Report{}, fmt.Errorf("no products in Postgres: the stack's init.sql did not run")
	}
	r := &Runner{Stack: s.Stack, Client: s.Client, Collector: s.Collector, Products: ids,
		WriteRate: o.WriteRate, ReadersPerPath: o.ReadersPerPath, Warmup: o.Warmup, Settle: o.Settle,
		RecoverTimeout: o.RecoverTimeout, Logger: s.Logger,
		Files: map[string][]string{ModeFile: FileModeFiles, ModeSlow: SlowLinkFiles}}
	r.defaults()
	for _, f := range o.Faults {
		if f.Mode == ModeSlow && r.Links == nil {
			if r.Links, err = s.openLinks(); err != nil {
				return Report{}, err
			}
			defer closeLinks(r.Links)
		}
	}
	rep := Report{Started: time.Now(), Machine: bench.DescribeMachine(ctx, s.Stack)}
	var names []string
	for _, f := range o.Faults {
		names = append(names, f.Name)
	}
	rate := o.WriteRate
	if rate <= 0 {
		rate = DefaultWriteRate
	}
	readers := o.ReadersPerPath
	if readers <= 0 {
		readers = DefaultReadersPerPath
	}
	rep.Settings = fmt.Sprintf("Workload: %.0f orders/s, %d readers per ranking (every second one with the latest token), "+
		"%s before each fault, %s after recovery. Faults: %s.", rate, readers, r.Warmup, r.Settle, strings.Join(names, ", "))
	// The first rounds' load depends on it: /ranking aggregates every order in
	// Postgres, and a stack kept from a full run holds the 1M its snapshot
	// rounds seeded (--fresh starts from none).
	if out, err := postgres(ctx, s.Collector.PostgresURL, "SELECT count(*) FROM orders"); err == nil {
		rep.Settings += fmt.Sprintf(" Orders in Postgres at the start: %s.", strings.TrimSpace(out))
	}
	for _, f := range o.Faults {
		if f.Load != nil {
			load := o.LoadRate
			if load <= 0 {
				load = DefaultLoadRate
			}
			rep.Settings += fmt.Sprintf(" Load rounds: %.0f orders/s (--load-rate); overload rounds %d times that.", load, OverloadFactor)
			break
		}
	}
	for _, f := range o.Faults {
		if ctx.Err() != nil {
			break
		}
		rep.Results = append(rep.Results, r.Round(ctx, f))
	}
	// Leave the stack as it was found: the accelerated runtime in mode: memory.
	if err := r.switchMode(ctx, ModeMemory); err != nil {
		return rep, err
	}
	return rep, ctx.Err()
}

// ReadEnvFile reads NAME=value lines of a compose env file (comments and blank
// lines skipped); a missing or unreadable file reads as empty.
func ReadEnvFile(path string) map[string]string {
	out := map[string]string{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}
