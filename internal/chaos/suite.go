package chaos

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// Compose services of docker-compose.yml.
const (
	ServicePostgres     = "postgres"
	ServiceAccelerated  = "accelerated"
	ServiceMaterialized = "materialized"
	ServiceAPI          = "api"
)

// Services are the stack's services in start order.
var Services = []string{ServicePostgres, ServiceAccelerated, ServiceMaterialized, ServiceAPI}

// Stack is the compose project under test, driven through the Docker Engine API.
type Stack = bench.Stack

// The compose files of the stack in each mode, relative to its directory.
var (
	// FileModeFiles run the accelerated runtime in mode: file.
	FileModeFiles = []string{"docker-compose.yml", "chaos/compose.file-mode.yml"}
	// SlowLinkFiles route the read-side hops through the chaos tool's proxies.
	SlowLinkFiles = []string{"docker-compose.yml", "chaos/compose.slow-link.yml"}
	modeFiles     = map[string][]string{ModeFile: FileModeFiles, ModeSlow: SlowLinkFiles}
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

// SecretVars are the variables of secrets.env the stack's services need (the
// Makefile's SECRET_VARS).
var SecretVars = []string{"ACCELERATED_API_KEY", "MATERIALIZED_API_KEY", "POSTGRES_PASSWORD"}

// Suite is a chaos run's wiring: the stack on its ports and the client.
type Suite struct {
	Stack  *Stack
	Ports  Ports
	Client *Client
	Logger *slog.Logger
}

// NewSuite wires a stack of project in dir on ports. The runtimes' API keys
// and Postgres's password come from ACCELERATED_API_KEY, MATERIALIZED_API_KEY
// and POSTGRES_PASSWORD when set, else from dir's secrets.env, the file compose
// hands the services (make secrets).
func NewSuite(project, dir string, ports Ports, logger *slog.Logger) *Suite {
	secrets := ReadEnvFile(filepath.Join(dir, "secrets.env"))
	key := func(name string) string { return cmp.Or(os.Getenv(name), secrets[name]) }
	local := func(port string) string { return fmt.Sprintf("http://127.0.0.1:%d", ports[port]) }
	pg := &url.URL{Scheme: "postgres", User: url.UserPassword("postgres", key("POSTGRES_PASSWORD")),
		Host: fmt.Sprintf("127.0.0.1:%d", ports["POSTGRES_PORT"]), Path: "/postgres", RawQuery: "sslmode=disable"}
	var env []string
	for _, v := range PortVars {
		env = append(env, fmt.Sprintf("%s=%d", v, ports[v]))
	}
	return &Suite{
		Stack: &Stack{Project: project, Dir: dir, Env: env},
		Ports: ports,
		Client: &Client{API: local("API_PORT"), HTTP: &http.Client{Timeout: DefaultRequestTimeout}, PostgresURL: pg.String(),
			Runtimes: map[string]Runtime{
				ServiceAccelerated:  {local("ACCELERATED_HTTP_PORT"), key("ACCELERATED_API_KEY"), local("ACCELERATED_METRICS_PORT") + "/metrics"},
				ServiceMaterialized: {local("MATERIALIZED_HTTP_PORT"), key("MATERIALIZED_API_KEY"), local("MATERIALIZED_METRICS_PORT") + "/metrics"},
			}},
		Logger: logger,
	}
}

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

// ReadEnvFile reads NAME=value lines of a compose env file (comments and blank
// lines skipped); a missing or unreadable file reads as empty.
func ReadEnvFile(path string) map[string]string {
	out := map[string]string{}
	b, _ := os.ReadFile(path)
	for line := range strings.Lines(string(b)) {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
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
	return bench.Poll(ctx, limit, 250*time.Millisecond, "the api to be ready", func() bool {
		return s.Client.Status(ctx, ServiceAPI) == http.StatusOK
	})
}

// Down removes the stack with its volumes, those of every mode included.
func (s *Suite) Down(ctx context.Context) error {
	_, err := s.Stack.WithFiles(append(slices.Clone(FileModeFiles), SlowLinkFiles[1:]...)...).Run(ctx, "down", "-v", "--remove-orphans")
	return err
}

// openLinks starts the proxies of the slow-link mode on the host, to
// Postgres's and the accelerated runtime's Flight host ports, and hands
// their ports to compose.
func (s *Suite) openLinks() ([]*Proxy, error) {
	var links []*Proxy
	for _, t := range [][2]string{{"CHAOS_PG_PROXY_PORT", "POSTGRES_PORT"}, {"CHAOS_FLIGHT_PROXY_PORT", "ACCELERATED_FLIGHT_PORT"}} {
		p, err := OpenProxy("0.0.0.0:0", fmt.Sprintf("127.0.0.1:%d", s.Ports[t[1]]))
		if err != nil {
			closeLinks(links)
			return nil, err
		}
		links = append(links, p)
		s.Stack.Env = append(s.Stack.Env, fmt.Sprintf("%s=%d", t[0], p.Port()))
	}
	return links, nil
}

func closeLinks(links []*Proxy) {
	for _, p := range links {
		p.Close()
	}
}
