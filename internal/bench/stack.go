package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
)

// Compose labels by which the Engine API finds a project's containers.
const (
	labelProject = "com.docker.compose.project"
	labelService = "com.docker.compose.service"
	labelNumber  = "com.docker.compose.container-number"
)

// Stack is one compose project on the local Docker engine. Its containers are
// found by their compose labels and driven through the Docker Engine API; only
// Run (up, down, scale) calls the compose command, which owns the project's
// definition: compose's Go library would bring buildkit and a newer Go with it.
type Stack struct {
	Project string
	Dir     string   // where docker-compose.yml is; the working directory when empty
	Files   []string // compose files (-f), in order; compose's default when empty
	Env     []string // extra environment of compose commands: ports, image names
	Compose []string // the compose command; DefaultCompose() when empty

	once sync.Once
	cli  *client.Client
	err  error
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

// Engine is the Docker Engine API client, made on first use from the
// environment (DOCKER_HOST ...).
func (s *Stack) Engine() (*client.Client, error) {
	s.once.Do(func() {
		s.cli, s.err = client.New(client.FromEnv, client.WithAPIVersionNegotiation())
		if s.err != nil {
			s.err = fmt.Errorf("docker engine: %w (is DOCKER_HOST right and the daemon running?)", s.err)
		}
	})
	return s.cli, s.err
}

// Close closes the Engine API client.
func (s *Stack) Close() error {
	if s.cli == nil {
		return nil
	}
	return s.cli.Close()
}

// WithFiles is the same project with other compose files.
func (s *Stack) WithFiles(files ...string) *Stack {
	return &Stack{Project: s.Project, Dir: s.Dir, Files: files, Env: s.Env, Compose: s.Compose}
}

// Run runs a compose subcommand of the project and returns its output.
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

// Containers lists a service's containers (stopped ones too when all), by
// their compose number.
func (s *Stack) Containers(ctx context.Context, service string, all bool) ([]container.Summary, error) {
	cli, err := s.Engine()
	if err != nil {
		return nil, err
	}
	f := make(client.Filters).Add("label", labelProject+"="+s.Project, labelService+"="+service)
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{All: all, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list containers of %s: %w", service, err)
	}
	number := func(c container.Summary) int { n, _ := strconv.Atoi(c.Labels[labelNumber]); return n }
	slices.SortFunc(res.Items, func(a, b container.Summary) int { return number(a) - number(b) })
	return res.Items, nil
}

// Container is the id of a service's first container, running or not.
func (s *Stack) Container(ctx context.Context, service string) (string, error) {
	cs, err := s.Containers(ctx, service, true)
	if err != nil {
		return "", err
	}
	if len(cs) == 0 {
		return "", fmt.Errorf("no container of service %s in compose project %s: is the stack up (make up) and --project right?", service, s.Project)
	}
	return cs[0].ID, nil
}

// Inspect returns a service's first container as the engine describes it.
func (s *Stack) Inspect(ctx context.Context, service string) (container.InspectResponse, error) {
	id, err := s.Container(ctx, service)
	if err != nil {
		return container.InspectResponse{}, err
	}
	res, err := s.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return container.InspectResponse{}, fmt.Errorf("inspect %s: %w", service, err)
	}
	return res.Container, nil
}

// State is a service container's status ("running", "exited", "paused") and,
// when it has a health check, its health.
func (s *Stack) State(ctx context.Context, service string) (status, health string, err error) {
	c, err := s.Inspect(ctx, service)
	if err != nil || c.State == nil {
		return "", "", err
	}
	if c.State.Health != nil {
		health = string(c.State.Health.Status)
	}
	return string(c.State.Status), health, nil
}

// Signal sends sig (KILL, INT, TERM) to a service's main process.
func (s *Stack) Signal(ctx context.Context, service, sig string) error {
	return s.each(ctx, service, "signal "+sig, func(cli *client.Client, id string) error {
		_, err := cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: sig})
		return err
	})
}

// Stop stops a service's container: SIGTERM, then SIGKILL after its grace period.
func (s *Stack) Stop(ctx context.Context, service string) error {
	return s.each(ctx, service, "stop", func(cli *client.Client, id string) error {
		_, err := cli.ContainerStop(ctx, id, client.ContainerStopOptions{})
		return err
	})
}

// Pause freezes a service's container: no CPU, its connections held open.
func (s *Stack) Pause(ctx context.Context, service string) error {
	return s.each(ctx, service, "pause", func(cli *client.Client, id string) error {
		_, err := cli.ContainerPause(ctx, id, client.ContainerPauseOptions{})
		return err
	})
}

// Unpause thaws a service's container; one that is not paused is no error.
func (s *Stack) Unpause(ctx context.Context, service string) error {
	return s.each(ctx, service, "unpause", func(cli *client.Client, id string) error {
		_, err := cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
		if err != nil && strings.Contains(err.Error(), "not paused") {
			return nil
		}
		return err
	})
}

// Start starts a service's container unless it runs already (a restart
// policy may have been quicker).
func (s *Stack) Start(ctx context.Context, service string) error {
	return s.each(ctx, service, "start", func(cli *client.Client, id string) error {
		res, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
		if err == nil && res.Container.State != nil && res.Container.State.Running {
			return nil
		}
		_, err = cli.ContainerStart(ctx, id, client.ContainerStartOptions{})
		return err
	})
}

func (s *Stack) each(ctx context.Context, service, verb string, do func(*client.Client, string) error) error {
	id, err := s.Container(ctx, service)
	if err != nil {
		return err
	}
	if err := do(s.cli, id); err != nil {
		return fmt.Errorf("%s %s: %w", verb, service, err)
	}
	return nil
}

// WaitStopped waits until a service's container is no longer running, or its
// restart policy has started it again.
func (s *Stack) WaitStopped(ctx context.Context, service string, limit time.Duration) error {
	return Poll(ctx, limit, 100*time.Millisecond, service+" to stop", func() bool {
		st, _, err := s.State(ctx, service)
		return err == nil && st != string(container.StateRunning)
	})
}

// WaitHealthy waits until every service is running and, where it has a
// health check, healthy.
func (s *Stack) WaitHealthy(ctx context.Context, limit time.Duration, services ...string) error {
	var last string
	err := Poll(ctx, limit, 250*time.Millisecond, "the stack to be healthy", func() bool {
		for _, svc := range services {
			st, h, err := s.State(ctx, svc)
			if err != nil || st != string(container.StateRunning) || (h != "" && h != string(container.Healthy)) {
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

// Network is the project's default network.
func (s *Stack) Network() string { return s.Project + "_default" }

// Disconnect cuts a service off the project's network.
func (s *Stack) Disconnect(ctx context.Context, service string) error {
	return s.each(ctx, service, "disconnect", func(cli *client.Client, id string) error {
		_, err := cli.NetworkDisconnect(ctx, s.Network(), client.NetworkDisconnectOptions{Container: id})
		return err
	})
}

// Connect puts a service back on the project's network under its service name.
func (s *Stack) Connect(ctx context.Context, service string) error {
	return s.each(ctx, service, "connect", func(cli *client.Client, id string) error {
		_, err := cli.NetworkConnect(ctx, s.Network(), client.NetworkConnectOptions{Container: id,
			EndpointConfig: &network.EndpointSettings{Aliases: []string{service}}})
		return err
	})
}

// Exec runs cmd in a service's container and returns its output; a non-zero
// exit is an error that carries the output.
func (s *Stack) Exec(ctx context.Context, service string, cmd ...string) (string, error) {
	id, err := s.Container(ctx, service)
	if err != nil {
		return "", err
	}
	ex, err := s.cli.ExecCreate(ctx, id, client.ExecCreateOptions{Cmd: cmd, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return "", fmt.Errorf("exec in %s: %w", service, err)
	}
	att, err := s.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return "", fmt.Errorf("exec in %s: %w", service, err)
	}
	defer att.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, att.Reader); err != nil {
		return out.String(), fmt.Errorf("exec in %s: %w", service, err)
	}
	res, err := s.cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit status %d", res.ExitCode)
	}
	if err != nil {
		return out.String(), fmt.Errorf("%s in %s: %w: %s", strings.Join(cmd, " "), service, err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// Logs is a service's log (stdout and stderr) since a time.
func (s *Stack) Logs(ctx context.Context, service string, since time.Time) (string, error) {
	id, err := s.Container(ctx, service)
	if err != nil {
		return "", err
	}
	rc, err := s.cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true,
		Since: strconv.FormatFloat(float64(since.UnixNano())/1e9, 'f', 9, 64)})
	if err != nil {
		return "", fmt.Errorf("logs of %s: %w", service, err)
	}
	defer rc.Close()
	var out bytes.Buffer
	_, err = stdcopy.StdCopy(&out, &out, rc)
	return out.String(), err
}

// Usage is a service container's cgroup CPU time (nanosecond precision) and
// its memory in use, the page cache excluded as docker stats shows it.
func (s *Stack) Usage(ctx context.Context, service string) (cpu time.Duration, memory int64, err error) {
	id, err := s.Container(ctx, service)
	if err != nil {
		return 0, 0, err
	}
	res, err := s.cli.ContainerStats(ctx, id, client.ContainerStatsOptions{})
	if err != nil {
		return 0, 0, fmt.Errorf("stats of %s: %w", service, err)
	}
	defer res.Body.Close()
	var st container.StatsResponse
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return 0, 0, fmt.Errorf("stats of %s: %w", service, err)
	}
	if st.CPUStats.CPUUsage.TotalUsage == 0 {
		return 0, 0, fmt.Errorf("stats of %s: no CPU usage: is it running?", service)
	}
	m := st.MemoryStats
	cache := max(m.Stats["inactive_file"], m.Stats["total_inactive_file"])
	return time.Duration(st.CPUStats.CPUUsage.TotalUsage), int64(m.Usage - min(cache, m.Usage)), nil
}

// Version is the engine's version, or "n/a".
func (s *Stack) Version(ctx context.Context) string {
	cli, err := s.Engine()
	if err != nil {
		return NA
	}
	v, err := cli.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return NA
	}
	return v.Version
}

// Poll calls cond every interval until it holds, limit passes (an error
// naming what) or ctx ends.
func Poll(ctx context.Context, limit, every time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %s waiting for %s", limit, what)
		}
		if !sleepUntil(ctx, time.Now().Add(every)) {
			return ctx.Err()
		}
	}
	return nil
}

// sleepUntil waits for t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}
