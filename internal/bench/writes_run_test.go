package bench_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// switches records what the runner asked of the runtimes, and fails On when
// failOn is set.
type switches struct {
	calls  []string
	failOn bool
}

func (s *switches) Off(context.Context) error { s.calls = append(s.calls, "off"); return nil }

func (s *switches) On(context.Context) error {
	s.calls = append(s.calls, "on")
	if s.failOn {
		return errors.New("docker unpause: no such container")
	}
	return nil
}

func (s *switches) How() string { return "recorded" }

func writesConfig(url string, sw bench.Runtimes) bench.WritesConfig {
	return bench.WritesConfig{
		WritesSettings: bench.WritesSettings{BaseURL: url, Rates: []float64{40, 80}, Step: 250 * ms, Rounds: 1, Settle: ms,
			TraceRate: 20, CatchUpTimeout: 5 * time.Second, Timeout: 5 * time.Second},
		Accelerated: bench.RuntimeEndpoint{URL: url, APIKey: runtimeKey}, Materialized: bench.RuntimeEndpoint{URL: url, APIKey: runtimeKey}, Runtimes: sw,
	}
}

func TestWritesRunner_Run(t *testing.T) {
	_, srv := newFakeAPI(t)
	sw := &switches{}
	rep, err := bench.NewWritesRunner(writesConfig(srv.URL, sw)).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range rep.Steps {
		got = append(got, s.Config)
	}
	// Interleaved per rate; each command side step switches the runtimes off
	// and on again. A goal step may follow, at 80% of the command side's rate.
	if want := []string{bench.ConfigCommand, bench.ConfigChain, bench.ConfigCommand, bench.ConfigChain}; !slices.Equal(got[:4], want) {
		t.Fatalf("steps %v, want %v first", got, want)
	}
	if want := []string{"off", "on", "off", "on"}; !slices.Equal(sw.calls, want) {
		t.Fatalf("runtimes switched %v, want %v", sw.calls, want)
	}
	for _, s := range rep.Steps {
		// The schedule's writes, all in flight awaited: 40/s for 250 ms is 10.
		if want := int64(s.Rate * 0.25); s.Writes.Requests != want || s.Writes.OK != want {
			t.Errorf("%s at %g/s: %d writes, %d 2xx; want %d", s.Config, s.Rate, s.Writes.Requests, s.Writes.OK, want)
		}
		if len(s.CatchUp) != 2 || !s.CatchUp[0].OK || !s.CatchUp[1].OK {
			t.Errorf("%s at %g/s: catch-up %+v, want both runtimes caught up", s.Config, s.Rate, s.CatchUp)
		}
		if c := procCPU(s.CPU.Processes, bench.ProcBench); c == nil || c.Why != "" {
			t.Errorf("%s at %g/s: no CPU of the load generator: %+v", s.Config, s.Rate, s.CPU)
		}
		switch s.Config {
		case bench.ConfigCommand:
			if len(s.Hops) != 0 || len(s.Trends) != 0 {
				t.Errorf("command side at %g/s has freshness %+v %+v", s.Rate, s.Hops, s.Trends)
			}
		case bench.ConfigChain:
			// 80/s traced at 20/s: every 4th write, on both runtimes, all seen.
			if want := int(s.Writes.OK) / bench.TraceSample(s.Rate, 20); s.Traced != want {
				t.Errorf("chain at %g/s traced %d writes, want %d", s.Rate, s.Traced, want)
			}
			if len(s.Hops) != 2 || s.Hops[0].Reached != s.Traced || s.Hops[1].Reached != s.Traced || len(s.Trends) != 2 {
				t.Errorf("chain at %g/s: hops %+v trends %+v", s.Rate, s.Hops, s.Trends)
			}
		}
	}
	md := bench.WritesMarkdown(rep)
	if !strings.Contains(md, "too short for numbers to quote") || !strings.Contains(md, "| 80 | whole chain | list 1 |") {
		t.Errorf("markdown:\n%s", md)
	}
}

func TestWritesRunner_RunFailsWhenARuntimeCannotBeSwitched(t *testing.T) {
	_, srv := newFakeAPI(t)
	sw := &switches{failOn: true}
	_, err := bench.NewWritesRunner(writesConfig(srv.URL, sw)).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no such container") {
		t.Fatalf("err = %v, want the switch's", err)
	}
	// The run tried once more to switch them on, on its way out.
	if want := []string{"off", "on", "on"}; !slices.Equal(sw.calls, want) {
		t.Fatalf("runtimes switched %v, want %v", sw.calls, want)
	}
}

func TestReadSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/statm"); err != nil {
		t.Skip("no /proc")
	}
	m := &bench.Meter{Processes: []bench.Process{{Name: bench.ProcBench, Self: true}, {Name: "nowhere"}}}
	if mem := m.Memory(context.Background()); mem[0].Bytes <= 0 || mem[1].Bytes != 0 || !strings.HasPrefix(mem[1].Source, "n/a") {
		t.Fatalf("memory %+v, want the own RSS and n/a", mem)
	}
	r := m.CPU(context.Background())
	if _, ok := r.Seconds[bench.ProcBench]; !ok || r.Why["nowhere"] == "" {
		t.Fatalf("CPU %+v, want the own CPU read and why the other is not", r)
	}
}

func procCPU(cs []bench.ProcessCPU, process string) *bench.ProcessCPU {
	for i := range cs {
		if cs[i].Process == process {
			return &cs[i]
		}
	}
	return nil
}

func TestWriter_Failures(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"error":"orders: the database is unavailable"}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set(wire.HeaderPosition, position.LSN(0x100*n.Load()).String())
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	c := bench.NewClient(srv.URL, 8, time.Second)
	defer c.Close()
	w := bench.NewWriter(c, 40, time.Now())
	w.For = 250 * ms
	w.Open()
	w.Wait(context.Background())
	w.Close()
	if got, want := w.Summary().Requests, int64(10); got != want {
		t.Fatalf("%d writes, want %d", got, want)
	}
	want := []bench.Reason{{Why: "status 503", Count: 5, Example: `{"error":"orders: the database is unavailable"}`}}
	if got := w.Failures(); !slices.Equal(got, want) {
		t.Fatalf("failures %+v, want %+v", got, want)
	}
	if got := len(w.Writes()); got != 5 {
		t.Fatalf("%d writes kept, want 5", got)
	}
}

// F's lone orders between two quiet windows, then the overload at twice the
// rate the whole chain sustained.
func TestWritesRunner_LoneAndOverload(t *testing.T) {
	_, srv := newFakeAPI(t)
	cfg := writesConfig(srv.URL, &switches{})
	cfg.Rates, cfg.LoneRate, cfg.LoneWindow, cfg.OverloadFor = []float64{40}, 40, 200*ms, 300*ms
	rep, err := bench.NewWritesRunner(cfg).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if l := rep.Lone; l == nil || l.Orders != 8 || procCPU(l.CPU, bench.ProcBench) == nil || !procCPU(l.CPU, bench.ProcBench).HasNet {
		t.Fatalf("lone %+v, want 8 orders and the load generator's F", l)
	}
	if o := rep.Overload; o == nil || o.Base != 40 || o.Rate != 80 || o.Writes.OK != 24 || len(o.CatchUp) != 2 {
		t.Fatalf("overload %+v, want 24 writes at 80/s, twice the 40/s sustained, and the catch-up", o)
	}
	if len(rep.Goals) == 0 {
		t.Fatal("no goals")
	}
}
