//go:build chaos

package chaos_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/chaos"
)

func freePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestChaosQuick is the CI setting: the compose stack from scratch on free
// ports, three faults (SIGKILL of the accelerated runtime while it streams, a
// Postgres restart, a partition of the materialized runtime), each judged by
// the checker; everything torn down at the end.
func TestChaosQuick(t *testing.T) {
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ports := chaos.Ports{}
	for _, v := range chaos.PortVars {
		ports[v] = freePort(t)
	}
	if err := chaos.CheckSecrets(dir); err != nil {
		t.Fatal(err)
	}
	project := fmt.Sprintf("cqrschaos%d", os.Getpid())
	s := chaos.NewSuite(project, dir, ports, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	ctx := context.Background()
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := s.Stack.Run(ctx, "logs", "--tail=80")
			t.Log(out)
		}
		if err := s.Down(ctx); err != nil {
			t.Error(err)
		}
		out, _ := exec.Command("docker", "ps", "-aq", "--filter", "label=com.docker.compose.project="+project).Output()
		if strings.TrimSpace(string(out)) != "" {
			t.Errorf("left behind: containers %q", out)
		}
	})
	if err := s.Up(ctx, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	faults, err := chaos.Select(chaos.Catalog(chaos.Settings{Partition: 10 * time.Second}),
		[]string{chaos.FaultKillAccelerated, chaos.FaultRestartPostgres, chaos.FaultPartitionMaterial})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Run(ctx, chaos.Options{Faults: faults, Warmup: 2 * time.Second, Settle: 3 * time.Second,
		RecoverTimeout: 2 * time.Minute})
	t.Logf("\n%s", chaos.Markdown(rep))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rep.Results), len(faults); got != want {
		t.Fatalf("%d rounds, want %d", got, want)
	}
	for _, r := range rep.Results {
		if !r.Clean() {
			t.Errorf("%s: err=%q recovered=%v converged=%v %s; ryw=%d monotonic=%d watermarks=%d unexpected=%v: %v",
				r.Fault, r.Err, r.Recovered, r.Converged, r.State.Summary(), len(r.RYW), len(r.Monotonic), len(r.Watermarks), r.Unexpected, r.Details)
		}
		if r.Acked == 0 {
			t.Errorf("%s: no order acknowledged", r.Fault)
		}
	}
}
