package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// Machine describes where a run happened, so numbers are never quoted without it.
type Machine struct {
	Cores       int    `json:"cores"`
	CPU         string `json:"cpu"`
	MemoryBytes int64  `json:"memory_bytes"`
	OS          string `json:"os"`
	Kernel      string `json:"kernel"`
	GoVersion   string `json:"go_version"`
	Docker      string `json:"docker"` // the engine's version, or "n/a"
}

// DescribeMachine reads the machine's description from /proc and the Docker
// engine (stack may be nil); what cannot be read is "n/a".
func DescribeMachine(ctx context.Context, stack *Stack) Machine {
	m := Machine{Cores: runtime.NumCPU(), CPU: NA, OS: runtime.GOOS + "/" + runtime.GOARCH, Kernel: NA,
		GoVersion: runtime.Version(), Docker: NA}
	if fs, err := procfs.NewDefaultFS(); err == nil {
		if cpus, err := fs.CPUInfo(); err == nil && len(cpus) > 0 {
			m.CPU = cpus[0].ModelName
		}
		if mem, err := fs.Meminfo(); err == nil && mem.MemTotal != nil {
			m.MemoryBytes = int64(*mem.MemTotal) << 10
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if stack != nil {
		m.Docker = stack.Version(ctx)
	}
	return m
}

// Header is what every report starts with: when, how and where it ran, and
// notes on what limits its numbers.
type Header struct {
	Started time.Time `json:"started"`
	Command string    `json:"command"`
	Machine Machine   `json:"machine"`
	Notes   []string  `json:"notes,omitempty"`
}

func newHeader(ctx context.Context, stack *Stack, command string) Header {
	return Header{Started: time.Now(), Command: command, Machine: DescribeMachine(ctx, stack)}
}

// loadNote is the host's load average at the start (before) and now, as a
// note; none when it cannot be read.
func loadNote(before string) []string {
	if before == "" {
		return nil
	}
	return []string{fmt.Sprintf("host load average (1, 5, 15 min) at the start: %s; at the end: %s (other work on the host inflates latencies and CPU per operation)", before, loadAverage())}
}

// progress prints a run's progress to Out; nothing when nil.
type progress struct{ Out io.Writer }

func (p progress) printf(format string, args ...any) {
	if p.Out != nil {
		fmt.Fprintf(p.Out, format, args...)
	}
}

// loadAverage is the host's load average over 1, 5 and 15 minutes, or empty.
func loadAverage() string {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return ""
	}
	la, err := fs.LoadAvg()
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%.2f, %.2f, %.2f", la.Load1, la.Load5, la.Load15)
}
