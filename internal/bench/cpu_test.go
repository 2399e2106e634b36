package bench

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

const exposition = `# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.34
process_cpu_seconds_total_other 99
dataset_watermark_lsn{dataset="products"} 1.0e+06
dataset_watermark_lsn{dataset="orders"} 2.4117272e+07
dataset_watermark_lsn{dataset="orders",replica="b"} 7
process_resident_memory_bytes 1.2e+08 1700000000000
`

func TestMetricsValue(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(exposition)) }))
	defer srv.Close()
	m, err := Scrape(context.Background(), srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, metric, label, value string
		want                       float64
		found                      bool
	}{
		{"plain counter", MetricCPU, "", "", 12.34, true},
		{"labelled, first match wins", MetricWatermark, "dataset", "orders", 24117272, true},
		{"other label value", MetricWatermark, "dataset", "products", 1e6, true},
		{"missing label value", MetricWatermark, "dataset", "rankings", 0, false},
		{"with a timestamp", MetricRSS, "", "", 1.2e8, true},
		{"a name that is only a prefix", "process_cpu", "", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, found := m.Value(tt.metric, tt.label, tt.value)
			if found != tt.found || v != tt.want {
				t.Errorf("got %v (found %v), want %v (found %v)", v, found, tt.want, tt.found)
			}
		})
	}
}

func TestCPUUsagePerOp(t *testing.T) {
	procs := []string{ProcAPI, ProcAccelerated, ProcMaterialized, ProcPostgres}
	var u CPUTime
	// Two windows: api and runtime 2 read in both; runtime 1 restarted in the
	// second; Postgres never read.
	read := func(s map[string]float64) CPUTime { return CPUTime{Seconds: s} }
	u.Add(read(map[string]float64{ProcAPI: 10, ProcAccelerated: 5, ProcMaterialized: 1}), read(map[string]float64{ProcAPI: 10.5, ProcAccelerated: 6, ProcMaterialized: 1.2}))
	u.Add(read(map[string]float64{ProcAPI: 11, ProcAccelerated: 6, ProcMaterialized: 1.2}), read(map[string]float64{ProcAPI: 11.5, ProcAccelerated: 0.1, ProcMaterialized: 1.4}))
	got := PerOp(u, 10_000, procs)
	want := []struct {
		perOp float64
		why   bool
	}{{100, false}, {0, true}, {40, false}, {0, true}}
	for i, w := range want {
		if math.Abs(got[i].PerOp-w.perOp) > 1e-6 || (got[i].Why != "") != w.why || got[i].Process != procs[i] {
			t.Errorf("%s: got %+v, want %v us per op (why set: %v)", procs[i], got[i], w.perOp, w.why)
		}
	}
	if v, _, hasNet, ok := ReadCPU(got); !ok || hasNet || math.Abs(v-140) > 1e-6 {
		t.Errorf("ReadCPU = %v, has net %v, %v; want 140 gross (api 100 + runtime 2 40), no net", v, hasNet, ok)
	}
	if _, _, _, ok := ReadCPU(PerOp(u, 0, procs)); ok {
		t.Error("ReadCPU with no operations: want unknown")
	}
}

func TestSubtractBackground(t *testing.T) {
	// A changes window of 10 s: api 0.5 s, runtime 2 0.2 s, runtime 1 unknown.
	bg := BackgroundOf([]ProcessCPU{
		{Process: ProcAPI, Seconds: 0.5}, {Process: ProcMaterialized, Seconds: 0.2}, {Process: ProcAccelerated, Why: "not read"},
	}, 10*time.Second)
	if len(bg) != 2 || math.Abs(bg[ProcAPI]-0.05) > 1e-9 || math.Abs(bg[ProcMaterialized]-0.02) > 1e-9 {
		t.Fatalf("background %v, want api 0.05/s and runtime 2 0.02/s", bg)
	}
	// A 4 s scenario of 2000 requests: api 0.6 s (0.2 s background), runtime 2
	// 0.18 s (0.08 s background), runtime 1 0.4 s with no background known.
	cs := []ProcessCPU{{Process: ProcAPI, Seconds: 0.6, PerOp: 300}, {Process: ProcMaterialized, Seconds: 0.18, PerOp: 90}, {Process: ProcAccelerated, Seconds: 0.4, PerOp: 200}}
	SubtractBackground(cs, bg, 4*time.Second, 2000)
	want := []struct {
		net float64
		has bool
	}{{200, true}, {50, true}, {0, false}}
	for i, w := range want {
		if cs[i].HasNet != w.has || math.Abs(cs[i].NetPerOp-w.net) > 1e-6 {
			t.Errorf("%s: net %v (has %v), want %v (has %v)", cs[i].Process, cs[i].NetPerOp, cs[i].HasNet, w.net, w.has)
		}
	}
	if v, net, hasNet, ok := ReadCPU(cs); !ok || !hasNet || math.Abs(v-390) > 1e-6 || math.Abs(net-250) > 1e-6 {
		t.Errorf("ReadCPU = %v, net %v (%v), %v; want 390 gross, 250 net", v, net, hasNet, ok)
	}
	if got := BackgroundOf(nil, 0); got != nil {
		t.Errorf("no changes window: background %v, want none", got)
	}
}

func TestScaleGoals(t *testing.T) {
	cpu := func(api, rt2 float64) []ProcessCPU {
		return []ProcessCPU{{Process: ProcAPI, PerOp: api}, {Process: ProcMaterialized, PerOp: rt2}}
	}
	size := func(apiUS, rt2US, ofNoop float64, p99 time.Duration) SizeResult {
		return SizeResult{
			Closed: []ScenarioResult{{Target: Target{Path: PathMaterialized}, OfCeiling: ofNoop, CPU: cpu(apiUS, rt2US)}},
			Watermarks: []Freshness{
				{Hop: HopWatermarkAccelerated, Phase: PhaseIdle, Writes: 10, Reached: 10, P99: p99},
				{Hop: HopWatermarkMaterialized, Phase: PhaseIdle, Writes: 10, Reached: 9, Unreached: 1, P99: p99},
			},
		}
	}
	tests := []struct {
		name string
		s    SizeResult
		want []string
	}{
		{"all met but one write not covered end to end", size(50, 25, 0.6, 20*time.Millisecond), []string{Pass, Pass, Pass, Miss}},
		{"cpu and ratio missed", size(100, 40, 0.3, 60*time.Millisecond), []string{Miss, Miss, Miss, Miss}},
		{"nothing measured", SizeResult{}, []string{NA, NA, NA, NA}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gs := scaleGoals(tt.s)
			if len(gs) != len(tt.want) {
				t.Fatalf("%d goals, want %d", len(gs), len(tt.want))
			}
			for i, g := range gs {
				if g.Status != tt.want[i] {
					t.Errorf("goal %q: %s (%s), want %s", g.Goal, g.Status, g.Got, tt.want[i])
				}
			}
		})
	}
}
