package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
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

// selfCPU is this process's user and system CPU time, at getrusage's
// microseconds (procfs reads /proc/self/stat in 10 ms ticks).
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	tv := func(t syscall.Timeval) time.Duration {
		return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
	}
	return tv(ru.Utime) + tv(ru.Stime), nil
}

// selfRSS is this process's resident memory.
func selfRSS() (int64, error) {
	p, err := procfs.Self()
	if err != nil {
		return 0, fmt.Errorf("own memory: %w", err)
	}
	st, err := p.Stat()
	if err != nil {
		return 0, fmt.Errorf("own memory: %w", err)
	}
	return int64(st.ResidentMemory()), nil
}

// peakRSS is a process's peak resident memory (VmHWM) under procDir ("/proc"
// when empty); 0 when it cannot be read.
func peakRSS(procDir string, pid int) int64 {
	if procDir == "" {
		procDir = procfs.DefaultMountPoint
	}
	fs, err := procfs.NewFS(procDir)
	if err != nil {
		return 0
	}
	p, err := fs.Proc(pid)
	if err != nil {
		return 0
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0
	}
	return int64(st.VmHWM)
}
