package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

const failoverUsage = `bench failover: a closed loop on one ranking path while the replicas of its
runtime service are killed, added and scaled down (make bench-failover).
The stack must run with --replicas replicas of --service; the tool then
  at --kill-at       SIGKILLs one replica (docker kill -s KILL, then removes it),
  at --add-at        adds one (compose up --scale service=replicas),
  at --scale-down-at scales the service to 1 (the others drain and stop),
and reports non-2xx, p99 per event and, from the api's log, how long the api
kept sending to the killed replica.

flags:
`

// failover is `bench failover`.
func failover(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench failover", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, failoverUsage); fs.PrintDefaults() }
	url := fs.String("url", DefaultURL, "base URL of the api")
	var cfg bench.FailoverConfig
	fs.StringVar(&cfg.Path, "path", "/ranking-materialized", "the path read")
	fs.IntVar(&cfg.Concurrency, "c", 100, "connections of the closed loop")
	fs.DurationVar(&cfg.Duration, "z", 40*time.Second, "length of the load")
	fs.Float64Var(&cfg.WriteRate, "write-rate", 20, "POST /orders per second, each read back with its Spice-Position")
	fs.DurationVar(&cfg.Window, "window", bench.DefaultFailoverWindow, "latencies after each event are reported for this long")
	service := fs.String("service", "materialized", "the compose service whose replicas are killed and added")
	replicas := fs.Int("replicas", 3, "replicas of the service during the run")
	killAt := fs.Duration("kill-at", 10*time.Second, "when to SIGKILL a replica (0: never)")
	addAt := fs.Duration("add-at", 20*time.Second, "when to add a replica (0: never)")
	downAt := fs.Duration("scale-down-at", 30*time.Second, "when to scale the service to 1 (0: never)")
	composeCmd := fs.String("compose", envOr("COMPOSE", "docker-compose"), "compose command, run in the current directory")
	project := fs.String("project", envOr("COMPOSE_PROJECT_NAME", "cqrs"), "compose project")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	st := &stack{compose: strings.Fields(*composeCmd), project: *project, service: *service}
	n, err := st.running(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "bench failover: %v\n", err)
		return 1
	}
	if n != *replicas {
		fmt.Fprintf(stderr, "bench failover: %d replicas of %s run, want %d: start the stack with make up MATERIALIZED_REPLICAS=%d\n", n, *service, *replicas, *replicas)
		return 1
	}
	var victimIP string
	var killedAt time.Time
	add := func(at time.Duration, name string, do func(context.Context) (string, error)) {
		if at > 0 {
			cfg.Events = append(cfg.Events, bench.FailoverEvent{Name: name, At: at, Do: do})
		}
	}
	add(*killAt, "SIGKILL one replica", func(ctx context.Context) (string, error) {
		var err error
		victimIP, killedAt, err = st.kill(ctx)
		return fmt.Sprintf("killed the replica at %s", victimIP), err
	})
	add(*addAt, "add a replica", func(ctx context.Context) (string, error) {
		return fmt.Sprintf("scaled %s to %d", *service, *replicas), st.scale(ctx, *replicas)
	})
	add(*downAt, "scale down to 1", func(ctx context.Context) (string, error) {
		return fmt.Sprintf("scaled %s to 1", *service), st.scale(ctx, 1)
	})
	start := time.Now()
	c := bench.NewClient(*url, cfg.Concurrency, 0)
	defer c.Close()
	res := bench.RunFailover(ctx, c, cfg)
	fmt.Fprint(stdout, bench.FailoverMarkdown(cfg, res))
	if victimIP != "" {
		fmt.Fprintln(stdout, st.ejection(ctx, start, victimIP, killedAt))
	}
	return 0
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// stack drives the compose project with the docker and compose CLIs.
type stack struct {
	compose          []string
	project, service string
}

func (s *stack) run(ctx context.Context, name string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// containers lists the running containers of a service as "id number", by number.
func (s *stack) containers(ctx context.Context, service string) ([][2]string, error) {
	out, err := s.run(ctx, "docker", "ps", "--filter", "label=com.docker.compose.project="+s.project,
		"--filter", "label=com.docker.compose.service="+service,
		"--format", `{{.ID}} {{.Label "com.docker.compose.container-number"}}`)
	if err != nil {
		return nil, err
	}
	var list [][2]string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			list = append(list, [2]string{f[0], f[1]})
		}
	}
	slices.SortFunc(list, func(a, b [2]string) int {
		x, _ := strconv.Atoi(a[1])
		y, _ := strconv.Atoi(b[1])
		return x - y
	})
	return list, nil
}

func (s *stack) running(ctx context.Context) (int, error) {
	list, err := s.containers(ctx, s.service)
	return len(list), err
}

// kill SIGKILLs the second replica by number and removes it, as a lost node.
func (s *stack) kill(ctx context.Context) (string, time.Time, error) {
	list, err := s.containers(ctx, s.service)
	if err != nil {
		return "", time.Time{}, err
	}
	if len(list) < 2 {
		return "", time.Time{}, fmt.Errorf("%d replicas of %s: nothing to kill", len(list), s.service)
	}
	id := list[1][0]
	ip, err := s.run(ctx, "docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", id)
	if err != nil {
		return "", time.Time{}, err
	}
	at := time.Now()
	if _, err := s.run(ctx, "docker", "kill", "-s", "KILL", id); err != nil {
		return "", at, err
	}
	_, err = s.run(ctx, "docker", "rm", "-f", id)
	return strings.TrimSpace(ip), at, err
}

func (s *stack) scale(ctx context.Context, n int) error {
	args := append(slices.Clone(s.compose[1:]), "up", "-d", "--no-deps", "--no-recreate",
		"--scale", fmt.Sprintf("%s=%d", s.service, n), s.service)
	_, err := s.run(ctx, s.compose[0], args...)
	return err
}

// ejection reads the api's log for when it stopped trusting the killed replica.
func (s *stack) ejection(ctx context.Context, since time.Time, ip string, killed time.Time) string {
	api, err := s.containers(ctx, "api")
	if err != nil || len(api) == 0 {
		return fmt.Sprintf("api log: cannot find the api container (%v)", err)
	}
	out, err := s.run(ctx, "docker", "logs", "--since", since.Format(time.RFC3339), api[0][0])
	if err != nil {
		return fmt.Sprintf("api log: %v", err)
	}
	var lines []string
	seen := map[string]bool{} // the first of each: a replica added later may reuse the address
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "addr="+ip+":") {
			continue
		}
		for _, what := range []string{"replica unhealthy", "replica ejected", "replica left"} {
			if !strings.Contains(line, what) || seen[what] {
				continue
			}
			t, err := logTime(line)
			if err != nil {
				continue
			}
			seen[what] = true
			lines = append(lines, fmt.Sprintf("- api log: %q %.0f ms after the SIGKILL", what, float64(t.Sub(killed))/float64(time.Millisecond)))
		}
	}
	if len(lines) == 0 {
		return "api log: no line about " + ip + " (LOG_LEVEL must be info or debug)"
	}
	return strings.Join(lines, "\n")
}

// logTime reads slog's time= attribute.
func logTime(line string) (time.Time, error) {
	i := strings.Index(line, "time=")
	if i < 0 {
		return time.Time{}, fmt.Errorf("no time")
	}
	f := strings.Fields(line[i+len("time="):])
	return time.Parse(time.RFC3339Nano, strings.Trim(f[0], `"`))
}
