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

// Stack is one compose project on the local Docker engine. Its containers are
// found by their compose labels and driven through the Docker Engine API; only
// Run (up, down, scale) calls the compose command, which owns the project's
// definition: compose's Go library would bring buildkit and a newer Go with it.
type Stack struct {
	Project string
	Dir     string   // where docker-compose.yml is; the working directory when empty
	Files   []string // compose files (-f), in order; compose's default when empty
	Env     []string // extra environment of compose commands: ports, image names

	once sync.Once
	cli  *client.Client
	err  error
}

// Engine is the Docker Engine API client, made on first use from the
// environment (DOCKER_HOST ...).
func (s *Stack) Engine() (*client.Client, error) {
	s.once.Do(func() {
		if s.cli, s.err = client.New(client.FromEnv); s.err != nil {
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
	return &Stack{Project: s.Project, Dir: s.Dir, Files: files, Env: s.Env}
}

// composeCommand is $COMPOSE, else docker compose v2, else docker-compose.
var composeCommand = sync.OnceValue(func() []string {
	if c := strings.Fields(os.Getenv("COMPOSE")); len(c) > 0 {
		return c
	}
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	return []string{"docker-compose"}
})

// Run runs a compose subcommand of the project and returns its output.
func (s *Stack) Run(ctx context.Context, args ...string) (string, error) {
	c := composeCommand()
	for _, f := range slices.Backward(s.Files) {
		args = append([]string{"-f", f}, args...)
	}
	cmd := exec.CommandContext(ctx, c[0], append(c[1:], args...)...)
	cmd.Dir = s.Dir
	cmd.Env = append(append(os.Environ(), s.Env...), "COMPOSE_PROJECT_NAME="+s.Project)
	out, err := cmd.CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		return string(out), fmt.Errorf("%s %s: %w: %s", strings.Join(c, " "), strings.Join(args, " "), err,
			strings.Join(lines[max(len(lines)-20, 0):], "\n"))
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
	f := make(client.Filters).Add("label", "com.docker.compose.project="+s.Project, "com.docker.compose.service="+service)
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{All: all, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list containers of %s: %w", service, err)
	}
	number := func(c container.Summary) int {
		n, _ := strconv.Atoi(c.Labels["com.docker.compose.container-number"])
		return n
	}
	slices.SortFunc(res.Items, func(a, b container.Summary) int { return number(a) - number(b) })
	return res.Items, nil
}

// do runs act on the id of a service's first container, running or not.
func (s *Stack) do(ctx context.Context, service, verb string, act func(id string) error) error {
	cs, err := s.Containers(ctx, service, true)
	switch {
	case err != nil:
		return err
	case len(cs) == 0:
		return fmt.Errorf("no container of service %s in compose project %s: is the stack up (make up) and --project right?", service, s.Project)
	}
	if err := act(cs[0].ID); err != nil {
		return fmt.Errorf("%s %s: %w", verb, service, err)
	}
	return nil
}

// Inspect returns a service's first container as the engine describes it.
func (s *Stack) Inspect(ctx context.Context, service string) (c container.InspectResponse, err error) {
	err = s.do(ctx, service, "inspect", func(id string) error {
		res, err := s.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
		c = res.Container
		return err
	})
	return c, err
}

// Signal sends sig (KILL, INT, TERM) to a service's main process.
func (s *Stack) Signal(ctx context.Context, service, sig string) error {
	return s.do(ctx, service, "signal "+sig, func(id string) error {
		_, err := s.cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: sig})
		return err
	})
}

// Stop stops a service's container: SIGTERM, then SIGKILL after its grace period.
func (s *Stack) Stop(ctx context.Context, service string) error {
	return s.do(ctx, service, "stop", func(id string) error {
		_, err := s.cli.ContainerStop(ctx, id, client.ContainerStopOptions{})
		return err
	})
}

// Pause freezes a service's container: no CPU, its connections held open.
func (s *Stack) Pause(ctx context.Context, service string) error {
	return s.do(ctx, service, "pause", func(id string) error {
		_, err := s.cli.ContainerPause(ctx, id, client.ContainerPauseOptions{})
		return err
	})
}

// Unpause thaws a service's container; one that is not paused is no error.
func (s *Stack) Unpause(ctx context.Context, service string) error {
	return s.do(ctx, service, "unpause", func(id string) error {
		if _, err := s.cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{}); err != nil && !strings.Contains(err.Error(), "not paused") {
			return err
		}
		return nil
	})
}

// Start starts a service's container unless it runs already (a restart
// policy may have been quicker).
func (s *Stack) Start(ctx context.Context, service string) error {
	return s.do(ctx, service, "start", func(id string) error {
		res, err := s.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
		if err == nil && res.Container.State != nil && res.Container.State.Running {
			return nil
		}
		_, err = s.cli.ContainerStart(ctx, id, client.ContainerStartOptions{})
		return err
	})
}

// Disconnect cuts a service off the project's default network.
func (s *Stack) Disconnect(ctx context.Context, service string) error {
	return s.do(ctx, service, "disconnect", func(id string) error {
		_, err := s.cli.NetworkDisconnect(ctx, s.Project+"_default", client.NetworkDisconnectOptions{Container: id})
		return err
	})
}

// Connect puts a service back on the project's default network under its
// service name.
func (s *Stack) Connect(ctx context.Context, service string) error {
	return s.do(ctx, service, "connect", func(id string) error {
		_, err := s.cli.NetworkConnect(ctx, s.Project+"_default", client.NetworkConnectOptions{Container: id,
			EndpointConfig: &network.EndpointSettings{Aliases: []string{service}}})
		return err
	})
}

// Process is the host pid of a service's main process and when it started.
func (s *Stack) Process(ctx context.Context, service string) (int, time.Time, error) {
	c, err := s.Inspect(ctx, service)
	if err == nil && (c.State == nil || c.State.Pid == 0) {
		err = fmt.Errorf("%s: no process: is it running?", service)
	}
	if err != nil {
		return 0, time.Time{}, err
	}
	started, err := time.Parse(time.RFC3339Nano, c.State.StartedAt)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("%s: start time %q: %w", service, c.State.StartedAt, err)
	}
	return c.State.Pid, started, nil
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
				last = fmt.Sprintf("%s is %s %s %v", svc, st, h, err)
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

// Exec runs cmd in a service's container and returns its output; a non-zero
// exit is an error that carries the output.
func (s *Stack) Exec(ctx context.Context, service string, cmd ...string) (string, error) {
	var out bytes.Buffer
	err := s.do(ctx, service, strings.Join(cmd, " ")+" in", func(id string) error {
		ex, err := s.cli.ExecCreate(ctx, id, client.ExecCreateOptions{Cmd: cmd, AttachStdout: true, AttachStderr: true})
		if err != nil {
			return err
		}
		att, err := s.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
		if err != nil {
			return err
		}
		defer att.Close()
		if _, err := stdcopy.StdCopy(&out, &out, att.Reader); err != nil {
			return err
		}
		res, err := s.cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("exit status %d: %s", res.ExitCode, strings.TrimSpace(out.String()))
		}
		return err
	})
	return out.String(), err
}

// Logs is a service's log (stdout and stderr) since a time.
func (s *Stack) Logs(ctx context.Context, service string, since time.Time) (string, error) {
	var out bytes.Buffer
	err := s.do(ctx, service, "logs of", func(id string) error {
		rc, err := s.cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true,
			Since: strconv.FormatFloat(float64(since.UnixNano())/1e9, 'f', 9, 64)})
		if err != nil {
			return err
		}
		defer rc.Close()
		_, err = stdcopy.StdCopy(&out, &out, rc)
		return err
	})
	return out.String(), err
}

// Usage is a service container's cgroup CPU time (nanosecond precision) and
// its memory in use, the page cache excluded as docker stats shows it.
func (s *Stack) Usage(ctx context.Context, service string) (cpu time.Duration, memory int64, err error) {
	var st container.StatsResponse
	err = s.do(ctx, service, "stats of", func(id string) error {
		res, err := s.cli.ContainerStats(ctx, id, client.ContainerStatsOptions{})
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
			return err
		}
		if st.CPUStats.CPUUsage.TotalUsage == 0 {
			return fmt.Errorf("no CPU usage: is it running?")
		}
		return nil
	})
	m := st.MemoryStats
	cache := min(max(m.Stats["inactive_file"], m.Stats["total_inactive_file"]), m.Usage)
	return time.Duration(st.CPUStats.CPUUsage.TotalUsage), int64(m.Usage - cache), err
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
