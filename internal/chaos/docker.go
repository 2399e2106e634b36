package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
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

// Stack is one compose project, driven with the docker CLI.
type Stack struct {
	Project string   // COMPOSE_PROJECT_NAME
	Dir     string   // where docker-compose.yml is
	Files   []string // compose files (-f), in order; empty for the default
	Env     []string // extra environment: ports, image names
	Compose []string // the compose command; DefaultCompose() when empty
}

// DefaultCompose is $COMPOSE, else docker compose v2, else docker-compose.
func DefaultCompose() []string {
	if c := os.Getenv("COMPOSE"); c != "" {
		return strings.Fields(c)
	}
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	return []string{"docker-compose"}
}

// Run runs a compose subcommand of the project.
func (s *Stack) Run(ctx context.Context, args ...string) (string, error) {
	c := s.Compose
	if len(c) == 0 {
		c = DefaultCompose()
	}
	var full []string
	for _, f := range s.Files {
		full = append(full, "-f", f)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, c[0], append(c[1:], full...)...)
	cmd.Dir = s.Dir
	cmd.Env = append(append(os.Environ(), s.Env...), "COMPOSE_PROJECT_NAME="+s.Project)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", strings.Join(c, " "), strings.Join(full, " "), err, lastLines(string(out), 20))
	}
	return string(out), nil
}

// docker runs the docker CLI.
func docker(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// Container is the id of a service's container.
func (s *Stack) Container(ctx context.Context, service string) (string, error) {
	out, err := docker(ctx, "ps", "-aq", "--filter", "label=com.docker.compose.project="+s.Project,
		"--filter", "label=com.docker.compose.service="+service)
	if err != nil {
		return "", err
	}
	id, _, _ := strings.Cut(out, "\n")
	if id == "" {
		return "", fmt.Errorf("no container of service %s in project %s: is the stack up?", service, s.Project)
	}
	return id, nil
}

// Network is the project's default network.
func (s *Stack) Network() string { return s.Project + "_default" }

// Signal sends sig (KILL, INT, TERM) to a service's main process.
func (s *Stack) Signal(ctx context.Context, service, sig string) error {
	id, err := s.Container(ctx, service)
	if err != nil {
		return err
	}
	_, err = docker(ctx, "kill", "-s", sig, id)
	return err
}

// State is a service container's status ("running", "exited", "restarting")
// and, when it has a health check, its health.
func (s *Stack) State(ctx context.Context, service string) (status, health string, err error) {
	id, err := s.Container(ctx, service)
	if err != nil {
		return "", "", err
	}
	out, err := docker(ctx, "inspect", "-f", "{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{end}}", id)
	if err != nil {
		return "", "", err
	}
	status, health, _ = strings.Cut(out, " ")
	return status, strings.TrimSpace(health), nil
}

// WaitStopped waits until a service's container is no longer running, or its
// restart policy has started it again.
func (s *Stack) WaitStopped(ctx context.Context, service string, limit time.Duration) error {
	return poll(ctx, limit, service+" to stop", func() bool {
		st, _, err := s.State(ctx, service)
		return err == nil && st != "running"
	})
}

// Start starts a service's container unless it runs already (a restart policy
// may have been quicker).
func (s *Stack) Start(ctx context.Context, service string) error {
	id, err := s.Container(ctx, service)
	if err != nil {
		return err
	}
	st, _, err := s.State(ctx, service)
	if err != nil || st == "running" {
		return err
	}
	_, err = docker(ctx, "start", id)
	if err != nil && strings.Contains(err.Error(), "already") {
		return nil
	}
	return err
}

// WaitHealthy waits until every service is running and healthy.
func (s *Stack) WaitHealthy(ctx context.Context, limit time.Duration) error {
	var last string
	err := poll(ctx, limit, "the stack to be healthy", func() bool {
		for _, svc := range Services {
			st, h, err := s.State(ctx, svc)
			if err != nil || st != "running" || (h != "" && h != "healthy") {
				last = fmt.Sprintf("%s is %s %s", svc, st, h)
				if err != nil {
					last = err.Error()
				}
				return false
			}
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("%w (%s)", err, last)
	}
	return nil
}

// Disconnect cuts a service off the project's network.
func (s *Stack) Disconnect(ctx context.Context, service string) error {
	id, err := s.Container(ctx, service)
	if err != nil {
		return err
	}
	_, err = docker(ctx, "network", "disconnect", s.Network(), id)
	return err
}

// Connect puts a service back on the project's network under its service name.
func (s *Stack) Connect(ctx context.Context, service string) error {
	id, err := s.Container(ctx, service)
	if err != nil {
		return err
	}
	_, err = docker(ctx, "network", "connect", "--alias", service, s.Network(), id)
	return err
}

// Psql runs one SQL statement in the Postgres container.
func (s *Stack) Psql(ctx context.Context, sql string) (string, error) {
	id, err := s.Container(ctx, ServicePostgres)
	if err != nil {
		return "", err
	}
	return docker(ctx, "exec", id, "psql", "-U", "postgres", "-d", "postgres", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql)
}

func poll(ctx context.Context, limit time.Duration, what string, cond func() bool) error {
	return pollEvery(ctx, limit, 250*time.Millisecond, what, cond)
}

func errGaveUp(limit time.Duration, what string) error {
	return fmt.Errorf("gave up after %s waiting for %s", limit, what)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
