package bench

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
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

// CPUReading is one reading of each process's CPU seconds; Why says why a
// process is missing.
type CPUReading struct {
	Seconds map[string]float64
	Why     map[string]string
}

// CPU reads every process at once.
func (m *Meter) CPU(ctx context.Context) CPUReading {
	r := CPUReading{Seconds: map[string]float64{}, Why: map[string]string{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range m.Processes {
		wg.Go(func() {
			v, err := m.cpu(ctx, p)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				r.Why[p.Name] = err.Error()
				return
			}
			r.Seconds[p.Name] = v.Seconds()
		})
	}
	wg.Wait()
	return r
}

func (m *Meter) cpu(ctx context.Context, p Process) (time.Duration, error) {
	if p.Self {
		return selfCPU()
	}
	var why error
	if m.Stack != nil && p.Service != "" {
		d, _, err := m.Stack.Usage(ctx, p.Service)
		if err == nil {
			return d, nil
		}
		why = err
	}
	if p.MetricsURL != "" {
		v, err := scrapeValue(ctx, m.HTTP, p.MetricsURL, MetricCPU, "", "")
		return time.Duration(v * float64(time.Second)), err
	}
	if why == nil {
		why = fmt.Errorf("no container and no metrics URL")
	}
	return 0, why
}

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
		out[i] = m.memory(ctx, p)
	}
	return out
}

func (m *Meter) memory(ctx context.Context, p Process) Memory {
	r := Memory{Process: p.Name}
	var b int64
	var err error
	switch {
	case p.Self:
		b, err = selfRSS()
		r.Source = "/proc/self/stat"
	case p.MetricsURL != "":
		var v float64
		v, err = scrapeValue(ctx, m.HTTP, p.MetricsURL, MetricRSS, "", "")
		b, r.Source = int64(v), p.MetricsURL
	case m.Stack != nil && p.Service != "":
		_, b, err = m.Stack.Usage(ctx, p.Service)
		r.Source = "container of " + p.Service
	default:
		err = fmt.Errorf("no metrics URL and no container")
	}
	if err != nil {
		r.Source = "n/a: " + err.Error()
		return r
	}
	r.Bytes = b
	return r
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
	for _, r := range []CPUReading{before, after} {
		for p, why := range r.Why {
			u.Invalid[p] = why
		}
	}
	for p, b := range before.Seconds {
		a, ok := after.Seconds[p]
		switch {
		case !ok:
		case a < b:
			u.Invalid[p] = "counter went back (restarted?)"
		default:
			u.Seconds[p] += a - b
		}
	}
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
	for i := range cs {
		rate, ok := bg[cs[i].Process]
		if !ok || cs[i].Why != "" || ops <= 0 {
			continue
		}
		cs[i].NetPerOp = (cs[i].Seconds - rate*wall.Seconds()) * 1e6 / float64(ops)
		cs[i].HasNet = true
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
	if a.HasNet && m.HasNet {
		net, hasNet = a.NetPerOp+m.NetPerOp, true
	}
	return a.PerOp + m.PerOp, net, hasNet, true
}

// cpuText is "gross (net)" microseconds, or the gross alone, or n/a.
func cpuText(c *ProcessCPU) string {
	switch {
	case c == nil || c.Why != "":
		return NA
	case c.HasNet:
		return fmt.Sprintf("%.0f (%.0f)", c.PerOp, c.NetPerOp)
	}
	return fmt.Sprintf("%.0f", c.PerOp)
}
