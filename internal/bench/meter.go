package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// Processes whose CPU and memory the benchmark reads, in report order.
const (
	ProcAPI          = "api"
	ProcAccelerated  = "runtime 1"
	ProcMaterialized = "runtime 2"
	ProcPostgres     = "postgres"
	// ProcBench is the load generator itself: on a small machine its CPU is
	// part of what the cores were doing.
	ProcBench = "bench (load generator)"
)

// Process says where one process is read: its compose service's container
// (CPU from the cgroup at nanosecond precision through the Engine API), else
// its Prometheus endpoint (process_cpu_seconds_total, in 10 ms ticks), or
// this very process (Self). Memory is the endpoint's resident set when there
// is one (a container's figure counts its tmpfs and kernel memory too).
type Process struct {
	Name       string
	Service    string // compose service of Meter.Stack's project
	MetricsURL string // http://host:9090/metrics
	Self       bool
}

// Meter reads processes' CPU time and memory. It never fails: a process that
// cannot be read is left out, with the reason.
type Meter struct {
	Stack     *Stack // where the services' containers are; none when nil
	HTTP      *http.Client
	Processes []Process
}

var errUnreadable = errors.New("no container and no metrics URL")

// CPUTime is each process's CPU seconds, in one reading or summed over
// windows. Why says why a process is missing from a reading, or why its sum
// is not valid (it was missing from a reading, or its counter went back: it
// restarted).
type CPUTime struct {
	Seconds map[string]float64
	Why     map[string]string
}

// CPU reads every process at once.
func (m *Meter) CPU(ctx context.Context) CPUTime {
	r := CPUTime{Seconds: map[string]float64{}, Why: map[string]string{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range m.Processes {
		wg.Go(func() {
			v, err := m.cpu(ctx, p)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				r.Why[p.Name] = err.Error()
			} else {
				r.Seconds[p.Name] = v.Seconds()
			}
		})
	}
	wg.Wait()
	return r
}

func (m *Meter) cpu(ctx context.Context, p Process) (time.Duration, error) {
	err := errUnreadable
	switch {
	case p.Self:
		return selfCPU()
	case m.Stack != nil && p.Service != "":
		var d time.Duration
		if d, _, err = m.Stack.Usage(ctx, p.Service); err == nil {
			return d, nil
		}
	}
	if p.MetricsURL == "" {
		return 0, err
	}
	v, err := scrapeValue(ctx, m.HTTP, p.MetricsURL, MetricCPU, "", "")
	return time.Duration(v * float64(time.Second)), err
}

// Add adds the window from before to after to t.
func (t *CPUTime) Add(before, after CPUTime) {
	if t.Seconds == nil {
		t.Seconds, t.Why = map[string]float64{}, map[string]string{}
	}
	for _, r := range []CPUTime{before, after} {
		for p, why := range r.Why {
			t.Why[p] = why
		}
	}
	for p, b := range before.Seconds {
		switch a, ok := after.Seconds[p]; {
		case !ok:
		case a < b:
			t.Why[p] = "counter went back (restarted?)"
		default:
			t.Seconds[p] += a - b
		}
	}
}

// Span adds each process's CPU over do to t and returns the time its
// readings span: from the first reading's end to the second's, the interval
// whose CPU the difference counts.
func (m *Meter) Span(ctx context.Context, t *CPUTime, do func()) time.Duration {
	before := m.CPU(ctx)
	start := time.Now()
	do()
	t.Add(before, m.CPU(ctx))
	return time.Since(start)
}

func isRuntime(process string) bool { return process == ProcAccelerated || process == ProcMaterialized }

// Memory is one reading of a process's resident memory.
type Memory struct {
	Process string `json:"process"`
	Bytes   int64  `json:"bytes"`  // 0 when unknown
	Source  string `json:"source"` // where it came from, or why there is none
}

// Memory reads every process's memory.
func (m *Meter) Memory(ctx context.Context) []Memory {
	out := make([]Memory, len(m.Processes))
	for i, p := range m.Processes {
		var v float64
		err := errUnreadable
		out[i] = Memory{Process: p.Name}
		switch {
		case p.Self:
			out[i].Bytes, err = selfRSS()
			out[i].Source = "/proc/self/stat"
		case p.MetricsURL != "":
			v, err = scrapeValue(ctx, m.HTTP, p.MetricsURL, MetricRSS, "", "")
			out[i].Bytes, out[i].Source = int64(v), p.MetricsURL
		case m.Stack != nil && p.Service != "":
			_, out[i].Bytes, err = m.Stack.Usage(ctx, p.Service)
			out[i].Source = "container of " + p.Service
		}
		if err != nil {
			out[i] = Memory{Process: p.Name, Source: "n/a: " + err.Error()}
		}
	}
	return out
}

// ProcessCPU is one process's CPU time over a phase, and per operation.
type ProcessCPU struct {
	Process string  `json:"process"`
	Seconds float64 `json:"seconds"`
	// PerOp is microseconds of CPU per operation (request or change); 0 with
	// Why set when unknown.
	PerOp float64 `json:"us_per_op"`
	// NetPerOp is PerOp less the process's background over the phase's wall
	// time; HasNet says whether it is known.
	NetPerOp float64 `json:"net_us_per_op,omitempty"`
	HasNet   bool    `json:"has_net,omitempty"`
	Why      string  `json:"why,omitempty"`
}

// PerOp divides each process's CPU by ops, in the order of processes; a
// process never read, or whose sum is invalid, says why instead.
func PerOp(t CPUTime, ops int64, processes []string) []ProcessCPU {
	out := make([]ProcessCPU, 0, len(processes))
	for _, p := range processes {
		c := ProcessCPU{Process: p}
		sec, ok := t.Seconds[p]
		switch {
		case t.Why[p] != "":
			c.Why = t.Why[p]
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

// Background is each process's CPU seconds per second of a phase.
type Background map[string]float64

// BackgroundOf is the CPU rate of each process over a window of d.
func BackgroundOf(cs []ProcessCPU, d time.Duration) Background {
	if d <= 0 {
		return nil
	}
	bg := Background{}
	for _, p := range cs {
		if p.Why == "" || p.Why == "no operations" {
			bg[p.Process] = p.Seconds / d.Seconds()
		}
	}
	return bg
}

// SubtractBackground sets NetPerOp of each known process of cs: its CPU less
// bg's rate over wall, per op.
func SubtractBackground(cs []ProcessCPU, bg Background, wall time.Duration, ops int64) {
	for i, c := range cs {
		if rate, ok := bg[c.Process]; ok && c.Why == "" && ops > 0 {
			cs[i].NetPerOp, cs[i].HasNet = (c.Seconds-rate*wall.Seconds())*1e6/float64(ops), true
		}
	}
}

// Names returns the processes' names, in order.
func Names(ps []Process) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
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

// ReadCPU is the CPU per materialized read, api + runtime 2, in microseconds,
// gross; ok false when either is unknown. net is the same less the
// background, when both backgrounds are known.
func ReadCPU(cs []ProcessCPU) (gross, net float64, hasNet, ok bool) {
	a, m := cpuOf(cs, ProcAPI), cpuOf(cs, ProcMaterialized)
	if a == nil || m == nil || a.Why != "" || m.Why != "" {
		return 0, 0, false, false
	}
	return a.PerOp + m.PerOp, a.NetPerOp + m.NetPerOp, a.HasNet && m.HasNet, true
}

// selfCPU is this process's user and system CPU time, at getrusage's
// microseconds (procfs reads /proc/self/stat in 10 ms ticks).
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
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

// peakRSS is a process's peak resident memory (VmHWM) as /proc shows it; 0
// when it cannot be read (not on the Docker host).
func peakRSS(pid int) int64 {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0
	}
	return int64(st.VmHWM)
}
