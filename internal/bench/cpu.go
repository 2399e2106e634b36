package bench

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Processes whose CPU the benchmark reads, in the order the report shows them.
const (
	ProcAPI          = "api"
	ProcAccelerated  = "runtime 1"
	ProcMaterialized = "runtime 2"
	ProcPostgres     = "postgres"
	// ProcBench is the benchmark itself, the load generator: on a small machine
	// its CPU is part of what the cores were doing.
	ProcBench = "bench (load generator)"
)

// CPUSource says where to read one process's CPU time: its Prometheus endpoint
// (process_cpu_seconds_total), else its container's cgroup (for Postgres, which
// has no metrics endpoint: every backend of the container counts).
type CPUSource struct {
	Process    string // ProcAPI ...
	MetricsURL string // http://host:9999/metrics
	Container  string // container name; when empty, the container of Service
	Service    string // Compose service, to find the container
	// Self reads this process's own CPU time (getrusage), the other fields unused.
	Self bool
}

// CPUReading is one reading of each process's CPU seconds; a process that could
// not be read is absent.
type CPUReading map[string]float64

// CPUSampler reads the CPU time of every source at once.
type CPUSampler struct {
	Sources []CPUSource
	HTTP    *http.Client
	Docker  string // the docker CLI, for cgroup readings; none when empty
	Project string // Compose project, to find a service's container

	mu        sync.Mutex
	container map[string]string // process -> container found
	why       map[string]string // process -> why it could not be read (last)
}

// Read reads every source concurrently. It never fails: a process that cannot be
// read is left out, and Why says why.
func (s *CPUSampler) Read(ctx context.Context) CPUReading {
	out := CPUReading{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, src := range s.Sources {
		wg.Go(func() {
			v, err := s.read(ctx, src)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				s.setWhy(src.Process, err.Error())
				return
			}
			out[src.Process] = v
		})
	}
	wg.Wait()
	return out
}

// Why says why process could not be read last time; empty when it could.
func (s *CPUSampler) Why(process string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.why[process]
}

func (s *CPUSampler) setWhy(process, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.why == nil {
		s.why = map[string]string{}
	}
	s.why[process] = why
}

func (s *CPUSampler) read(ctx context.Context, src CPUSource) (float64, error) {
	if src.Self {
		return selfCPU()
	}
	if src.MetricsURL != "" {
		v, err := scrape(ctx, s.HTTP, src.MetricsURL, MetricKey{Name: MetricCPU})
		if err != nil {
			return 0, err
		}
		return v[0], nil
	}
	if s.Docker == "" || (src.Container == "" && src.Service == "") {
		return 0, fmt.Errorf("no metrics URL and no container")
	}
	name, err := s.containerOf(ctx, src)
	if err != nil {
		return 0, err
	}
	// cgroup v2 (cpu.stat, microseconds), else v1 (cpuacct.usage, nanoseconds).
	out, err := exec.CommandContext(ctx, s.Docker, "exec", name, "sh", "-c",
		"cat /sys/fs/cgroup/cpu.stat 2>/dev/null || echo cpuacct_ns $(cat /sys/fs/cgroup/cpuacct/cpuacct.usage)").Output()
	if err != nil {
		return 0, fmt.Errorf("docker exec %s: cgroup cpu: %w", name, err)
	}
	return ParseCgroupCPU(string(out))
}

func (s *CPUSampler) containerOf(ctx context.Context, src CPUSource) (string, error) {
	if src.Container != "" {
		return src.Container, nil
	}
	s.mu.Lock()
	name := s.container[src.Process]
	s.mu.Unlock()
	if name != "" {
		return name, nil
	}
	name, err := composeContainer(ctx, s.Docker, s.Project, src.Service)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	if s.container == nil {
		s.container = map[string]string{}
	}
	s.container[src.Process] = name
	s.mu.Unlock()
	return name, nil
}

// selfCPU is this process's user and system CPU seconds.
func selfCPU() (float64, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime), nil
}

// ParseCgroupCPU reads a cgroup's CPU seconds: usage_usec of cgroup v2's
// cpu.stat, or "cpuacct_ns N" (cgroup v1's cpuacct.usage, as Read prints it).
func ParseCgroupCPU(s string) (float64, error) {
	for line := range strings.SplitSeq(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		div := 0.0
		switch f[0] {
		case "usage_usec":
			div = 1e6
		case "cpuacct_ns":
			div = 1e9
		default:
			continue
		}
		n, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return 0, fmt.Errorf("cgroup cpu %q: %w", line, err)
		}
		return n / div, nil
	}
	return 0, fmt.Errorf("cgroup cpu: no usage_usec in %q", strings.TrimSpace(s))
}

// CPUUsage adds up each process's CPU seconds over windows (before and after
// readings). A process missing from a reading, or whose counter went back (it
// restarted), makes its sum invalid.
type CPUUsage struct {
	Seconds map[string]float64
	Invalid map[string]string
}

// Add adds the window from before to after.
func (u *CPUUsage) Add(before, after CPUReading) {
	if u.Seconds == nil {
		u.Seconds, u.Invalid = map[string]float64{}, map[string]string{}
	}
	for p := range union(before, after) {
		b, okB := before[p]
		a, okA := after[p]
		switch {
		case !okB || !okA:
			u.Invalid[p] = "not read"
		case a < b:
			u.Invalid[p] = "counter went back (restarted?)"
		default:
			u.Seconds[p] += a - b
		}
	}
}

func union(a, b CPUReading) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

// ProcessCPU is one process's CPU time over a phase, and per operation.
type ProcessCPU struct {
	Process string  `json:"process"`
	Seconds float64 `json:"seconds"`
	// PerOp is microseconds of CPU per operation (request or change); 0 with
	// Why set when unknown.
	PerOp float64 `json:"us_per_op"`
	// NetPerOp is PerOp less the process's background (its CPU per second in
	// the changes window, with writes and no reads) over the phase's wall
	// time; HasNet says whether it is known.
	NetPerOp float64 `json:"net_us_per_op,omitempty"`
	HasNet   bool    `json:"has_net,omitempty"`
	Why      string  `json:"why,omitempty"`
}

// Background is each process's CPU seconds per second of a phase.
type Background map[string]float64

// BackgroundOf is the CPU rate of each process of a changes window.
func BackgroundOf(c *ChangeCost) Background {
	if c == nil || c.Duration <= 0 {
		return nil
	}
	bg := Background{}
	for _, p := range c.CPU {
		if p.Why == "" {
			bg[p.Process] = p.Seconds / c.Duration.Seconds()
		}
	}
	return bg
}

// SubtractBackground sets NetPerOp of each known process of cs: its CPU less
// bg's rate over wall, per op.
func SubtractBackground(cs []ProcessCPU, bg Background, wall time.Duration, ops int64) {
	for i := range cs {
		rate, ok := bg[cs[i].Process]
		if !ok || cs[i].Why != "" || ops <= 0 {
			continue
		}
		cs[i].NetPerOp = (cs[i].Seconds - rate*wall.Seconds()) * 1e6 / float64(ops)
		cs[i].HasNet = true
	}
}

// PerOp divides each process's CPU by ops, in the order of processes; a
// process never read, or whose sum is invalid, says why instead.
func PerOp(u CPUUsage, ops int64, processes []string) []ProcessCPU {
	out := make([]ProcessCPU, 0, len(processes))
	for _, p := range processes {
		c := ProcessCPU{Process: p}
		sec, ok := u.Seconds[p]
		switch {
		case u.Invalid[p] != "":
			c.Why = u.Invalid[p]
		case !ok:
			c.Why = "not read"
		case ops <= 0:
			c.Seconds, c.Why = sec, "no operations"
		default:
			c.Seconds, c.PerOp = sec, sec*1e6/float64(ops)
		}
		out = append(out, c)
	}
	return out
}

// Processes returns the process names of sources, in order.
func Processes(sources []CPUSource) []string {
	out := make([]string, len(sources))
	for i, s := range sources {
		out[i] = s.Process
	}
	return out
}

// cpuOf returns the CPU of process in cs, or nil.
func cpuOf(cs []ProcessCPU, process string) *ProcessCPU {
	for i := range cs {
		if cs[i].Process == process {
			return &cs[i]
		}
	}
	return nil
}

// ReadCPU is the CPU per materialized read: api + runtime 2 of the materialized
// scenario (cache on), in microseconds, gross (as the goal is stated: each
// process's CPU over the requests served); ok false when either is unknown.
// net is the same less the background, when both backgrounds are known.
func ReadCPU(cs []ProcessCPU) (gross, net float64, hasNet, ok bool) {
	a, m := cpuOf(cs, ProcAPI), cpuOf(cs, ProcMaterialized)
	if a == nil || m == nil || a.Why != "" || m.Why != "" {
		return 0, 0, false, false
	}
	if a.HasNet && m.HasNet {
		net, hasNet = a.NetPerOp+m.NetPerOp, true
	}
	return a.PerOp + m.PerOp, net, hasNet, true
}

// cpuText is "gross (net)" microseconds, or the gross alone, or n/a.
func cpuText(c *ProcessCPU) string {
	switch {
	case c == nil || c.Why != "":
		return "n/a"
	case c.HasNet:
		return fmt.Sprintf("%.0f (%.0f)", c.PerOp, c.NetPerOp)
	default:
		return fmt.Sprintf("%.0f", c.PerOp)
	}
}
