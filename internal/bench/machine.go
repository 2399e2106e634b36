package bench

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes where a run happened, so numbers are never quoted without it.
type Machine struct {
	Cores       int    `json:"cores"`
	CPU         string `json:"cpu"`
	MemoryBytes int64  `json:"memory_bytes"`
	OS          string `json:"os"`
	Kernel      string `json:"kernel"`
	GoVersion   string `json:"go_version"`
	Docker      string `json:"docker"` // server version, or "n/a"
}

// DescribeMachine reads the machine's description; what cannot be read is "n/a".
// docker is the CLI to ask for the server version; skipped when empty.
func DescribeMachine(ctx context.Context, docker string) Machine {
	m := Machine{
		Cores:     runtime.NumCPU(),
		CPU:       "n/a",
		OS:        runtime.GOOS + "/" + runtime.GOARCH,
		Kernel:    "n/a",
		GoVersion: runtime.Version(),
		Docker:    "n/a",
	}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.CPU = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		kb, _ := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
		m.MemoryBytes = kb << 10
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if docker != "" {
		out, err := exec.CommandContext(ctx, docker, "version", "--format", "{{.Server.Version}}").Output()
		if v := strings.TrimSpace(string(out)); err == nil && v != "" {
			m.Docker = v
		}
	}
	return m
}

// procField returns the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
