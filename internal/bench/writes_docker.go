package bench

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// Ways DockerRuntimes switches the runtimes off.
const (
	// RuntimesPause freezes the runtimes' containers (docker pause): no CPU,
	// connections held. Runtime 1's replication slot stays active and keeps
	// the backlog in Postgres; on unpause it streams it and catches up, as it
	// would after any stall.
	RuntimesPause = "pause"
	// RuntimesStop stops them (docker stop, as docker-compose stop). A runtime
	// in memory mode drops its slot on a clean shutdown, so on start it takes
	// a fresh snapshot: the catch-up is a restart's, not a backlog's.
	RuntimesStop = "stop"
)

// switchAttempts is how often DockerRuntimes tries each docker command.
const switchAttempts = 5

var _ Runtimes = (*DockerRuntimes)(nil)

// DockerRuntimes switches the runtimes' containers off and on with the docker
// CLI: the first container of each Compose service of Project. Off handles the
// services in reverse order (runtime 2 before the runtime it reads), On in order.
type DockerRuntimes struct {
	Docker   string   // the docker CLI; required
	Project  string   // Compose project; required, several stacks may share the host
	Services []string // "accelerated", "materialized"
	Mode     string   // RuntimesPause (default) or RuntimesStop
}

// How says what Off does, for the report.
func (d *DockerRuntimes) How() string {
	if d.Mode == RuntimesStop {
		return "runtimes stopped (docker stop of " + strings.Join(d.Services, ", ") + "), started again after the step: a restart takes a fresh snapshot"
	}
	return "runtimes paused (docker pause of " + strings.Join(d.Services, ", ") + "), unpaused after the step: runtime 1's slot keeps the backlog in Postgres"
}

// Off pauses or stops the runtimes.
func (d *DockerRuntimes) Off(ctx context.Context) error {
	verb := "pause"
	if d.Mode == RuntimesStop {
		verb = "stop"
	}
	svcs := slices.Clone(d.Services)
	slices.Reverse(svcs)
	return d.each(ctx, verb, svcs)
}

// On unpauses or starts the runtimes.
func (d *DockerRuntimes) On(ctx context.Context) error {
	verb := "unpause"
	if d.Mode == RuntimesStop {
		verb = "start"
	}
	return d.each(ctx, verb, d.Services)
}

func (d *DockerRuntimes) each(ctx context.Context, verb string, services []string) error {
	if d.Docker == "" || d.Project == "" {
		return fmt.Errorf("switch the runtimes: the docker CLI and the compose project are required")
	}
	var errs []error
	for _, svc := range services {
		// Stopped containers too: a stopped one must be found to start it.
		name, err := findContainer(ctx, d.Docker, d.Project, svc, true)
		if err != nil {
			return err
		}
		if err := d.run(ctx, verb, name); err != nil {
			if verb == "pause" || verb == "stop" {
				return err // the caller switches them on again
			}
			errs = append(errs, err) // switch on the others all the same
		}
	}
	return errors.Join(errs...)
}

// run runs docker verb name, a few times: freezing a busy container's cgroup
// fails now and then on a loaded host ("unable to freeze"). Switching on a
// container that is not off is no error, so On also mends a half-done Off.
func (d *DockerRuntimes) run(ctx context.Context, verb, name string) error {
	var err error
	for attempt := range switchAttempts {
		if attempt > 0 && !sleepUntil(ctx, time.Now().Add(time.Second)) {
			break
		}
		var out []byte
		if out, err = exec.CommandContext(ctx, d.Docker, verb, name).CombinedOutput(); err == nil {
			return nil
		}
		msg := strings.TrimSpace(string(out))
		if verb == "unpause" && strings.Contains(msg, "is not paused") {
			return nil
		}
		err = fmt.Errorf("docker %s %s: %w: %s", verb, name, err, msg)
	}
	return err
}
