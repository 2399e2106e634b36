package bench_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// writesOf is a summary of n writes in d, ok of them 201.
func writesOf(n, ok int64, d time.Duration) bench.Summary {
	s := bench.Summary{Requests: n, OK: ok, Elapsed: d, StatusCodes: map[int]int64{}}
	if ok > 0 {
		s.StatusCodes[201] = ok
	}
	if n > ok {
		s.StatusCodes[500] = n - ok
	}
	return s
}

// trend is a hop's trend from start to end with a slack of 100 ms.
func trend(hop string, start, end time.Duration, unseen int) bench.HopTrend {
	return bench.HopTrend{Hop: hop, Start: start, End: end, StartWrites: 10, EndWrites: 10, Unseen: unseen, Slack: 100 * ms}
}

func TestVerdict(t *testing.T) {
	steady := []bench.HopTrend{trend(bench.HopWatermarkAccelerated, 40*ms, 60*ms, 0), trend(bench.HopWatermarkMaterialized, 80*ms, 150*ms, 0)}
	for _, tc := range []struct {
		name string
		step bench.WriteStep
		ok   bool
		why  string // a part of the reason
	}{
		{"command side, all 2xx at the rate", bench.WriteStep{Config: bench.ConfigCommand, Rate: 100, Writes: writesOf(1000, 1000, 10*time.Second)}, true, ""},
		{"command side, 96% achieved", bench.WriteStep{Config: bench.ConfigCommand, Rate: 100, Writes: writesOf(960, 960, 10*time.Second)}, true, ""},
		{"command side, 94% achieved", bench.WriteStep{Config: bench.ConfigCommand, Rate: 100, Writes: writesOf(940, 940, 10*time.Second)}, false, "achieved 94/s"},
		{"one write failed", bench.WriteStep{Config: bench.ConfigCommand, Rate: 100, Writes: writesOf(1000, 999, 10*time.Second)}, false, "1 of 1000 writes not 2xx"},
		{"no writes", bench.WriteStep{Config: bench.ConfigCommand, Rate: 100, Writes: writesOf(0, 0, 10*time.Second)}, false, "no write"},
		{"chain, lags steady", bench.WriteStep{Config: bench.ConfigChain, Rate: 100, Writes: writesOf(1000, 1000, 10*time.Second), Trends: steady}, true, ""},
		{"chain, no trends", bench.WriteStep{Config: bench.ConfigChain, Rate: 100, Writes: writesOf(1000, 1000, 10*time.Second)}, false, "no runtime lag"},
		{"chain, runtime 2 lag grew past the slack", bench.WriteStep{Config: bench.ConfigChain, Rate: 100, Writes: writesOf(1000, 1000, 10*time.Second),
			Trends: []bench.HopTrend{steady[0], trend(bench.HopWatermarkMaterialized, 80*ms, 181*ms, 0)}}, false, "runtime 2 watermark (rankings): lag grew from 80.00 to 181.00 ms"},
		{"chain, a traced write not seen", bench.WriteStep{Config: bench.ConfigChain, Rate: 100, Writes: writesOf(1000, 1000, 10*time.Second),
			Trends: []bench.HopTrend{trend(bench.HopWatermarkAccelerated, 40*ms, 40*ms, 1), steady[1]}}, false, "1 traced writes"},
		{"chain, an empty window", bench.WriteStep{Config: bench.ConfigChain, Rate: 100, Writes: writesOf(1000, 1000, 10*time.Second),
			Trends: []bench.HopTrend{{Hop: bench.HopWatermarkAccelerated, StartWrites: 3}, steady[1]}}, false, "no traced write"},
		{"chain, writes failing come first", bench.WriteStep{Config: bench.ConfigChain, Rate: 100, Writes: writesOf(1000, 990, 10*time.Second), Trends: steady}, false, "10 of 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := bench.Verdict(tc.step)
			if ok != tc.ok || !strings.Contains(why, tc.why) || (ok && why != "") {
				t.Fatalf("Verdict = %v, %q; want %v, containing %q", ok, why, tc.ok, tc.why)
			}
		})
	}
}

func TestTrendOf(t *testing.T) {
	hop := bench.HopWatermarkAccelerated
	// A 10 s step from 0: windows [0, 2 s) and [8 s, 10 s); slack 5% of 8 s.
	var traced []bench.Write
	var answers []bench.Answer
	for i := range 10 {
		w := bench.Write{Token: position.LSN(100 + i), At: time.Duration(i) * time.Second}
		traced = append(traced, w)
		lag := 50 * ms // steady ...
		if i >= 8 {
			lag = 900 * ms // ... until the end
		}
		if i == 5 {
			continue // unseen, but in neither window
		}
		answers = append(answers, answer(hop, w, w.At+lag, w.Token))
	}
	got := bench.TrendOf(hop, traced, answers, 0, 10*time.Second)
	want := bench.HopTrend{Hop: hop, Start: 50 * ms, End: 900 * ms, StartWrites: 2, EndWrites: 2, Slack: 400 * ms}
	// The medians come from an HDR histogram: within 0.1%.
	near := func(a, b time.Duration) bool { return a >= b && a <= b+b/1000 }
	if !near(got.Start, want.Start) || !near(got.End, want.End) {
		t.Fatalf("TrendOf = %+v, want %+v", got, want)
	}
	got.Start, got.End = want.Start, want.End
	if got != want {
		t.Fatalf("TrendOf = %+v, want %+v", got, want)
	}
	if !got.Grew() {
		t.Fatalf("Grew = false for %+v", got)
	}
	// A short step's slack is at least MinLagSlack.
	short := bench.TrendOf(hop, traced[:2], answers[:2], 0, 1100*ms)
	if got, want := short.Slack, bench.MinLagSlack; got != want {
		t.Fatalf("slack of a 1.1 s step = %s, want %s", got, want)
	}
	if short.Grew() {
		t.Fatalf("Grew = true for %+v", short)
	}
}

// steps are one configuration's steps at rates, sustained where ok says.
func steps(cfg string, rates []float64, ok []bool) []bench.WriteStep {
	out := make([]bench.WriteStep, len(rates))
	for i := range rates {
		out[i] = bench.WriteStep{Config: cfg, Rate: rates[i], Sustained: ok[i]}
	}
	return out
}

func TestSustainedRangeAndRamp(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rates  []float64
		ok     []bool
		lo, hi float64
		next   float64
	}{
		{"none", nil, nil, 0, 0, 0},
		{"all sustained: go up", []float64{100, 250, 500}, []bool{true, true, true}, 500, 0, 750},
		{"bracket: bisect", []float64{100, 250, 500}, []bool{true, true, false}, 250, 500, 375},
		{"bisected to 5%: done", []float64{100, 105}, []bool{true, false}, 100, 105, 0},
		{"nothing sustained: go down", []float64{100, 250}, []bool{false, false}, 0, 100, 50},
		{"nothing sustained down to 10/s: done", []float64{10}, []bool{false}, 0, 10, 0},
		{"a failure below a success is noise", []float64{100, 250, 500, 1000}, []bool{true, false, true, false}, 500, 1000, 750},
		{"the next rate was tried: done", []float64{100, 200, 150}, []bool{true, false, false}, 100, 150, 125},
		{"the middle was tried: done", []float64{100, 150, 125, 124}, []bool{true, false, false, true}, 124, 125, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := steps(bench.ConfigChain, tc.rates, tc.ok)
			lo, hi := bench.SustainedRange(s)
			if lo != tc.lo || hi != tc.hi {
				t.Fatalf("SustainedRange = %g, %g; want %g, %g", lo, hi, tc.lo, tc.hi)
			}
			if got := bench.NextRampRate(s); got != tc.next {
				t.Fatalf("NextRampRate = %g, want %g", got, tc.next)
			}
		})
	}
}

func TestTraceSample(t *testing.T) {
	for _, tc := range []struct {
		rate, trace float64
		want        int
	}{{100, 50, 2}, {50, 50, 1}, {10, 50, 1}, {2000, 50, 40}, {250, 50, 5}, {260, 50, 6}, {100, 0, 1}} {
		if got := bench.TraceSample(tc.rate, tc.trace); got != tc.want {
			t.Errorf("TraceSample(%g, %g) = %d, want %d", tc.rate, tc.trace, got, tc.want)
		}
	}
}

// cpuPer is a step's CPU of orders: us per order of each process, in order
// api, postgres, runtime 1, runtime 2.
func cpuPer(orders int64, api, pg, r1, r2 float64) bench.StepCPU {
	c := func(p string, us float64) bench.ProcessCPU {
		return bench.ProcessCPU{Process: p, PerOp: us, Seconds: us * float64(orders) / 1e6}
	}
	return bench.StepCPU{Wall: 10 * time.Second, Processes: []bench.ProcessCPU{
		c(bench.ProcAPI, api), c(bench.ProcPostgres, pg), c(bench.ProcAccelerated, r1), c(bench.ProcMaterialized, r2), c(bench.ProcBench, 50)}}
}

// lags is a hop's lags: n writes at lag each, and five at slow.
func lags(hop string, n int, lag, slow time.Duration) bench.HopLags {
	h := bench.HopLags{Hop: hop}
	for range n {
		h.Lags = append(h.Lags, lag)
	}
	for range 5 {
		h.Lags = append(h.Lags, slow)
	}
	return h
}

// goalReport: the command side sustains 1,000/s and fails at 2,000/s; the
// chain sustains 500/s and fails at 1,000/s, where it is slow and costly; at
// 100/s two rounds pool their lags.
func goalReport() *bench.WritesReport {
	hop := func(name string, p99 time.Duration) bench.Freshness {
		return bench.Freshness{Hop: name, Writes: 100, Reached: 100, P50: p99 / 2, P99: p99, Max: p99}
	}
	quiet := func() []bench.HopLags {
		return []bench.HopLags{lags(bench.HopWatermarkAccelerated, 99, 4*ms, 9*ms), lags(bench.HopWatermarkMaterialized, 99, 12*ms, 20*ms)}
	}
	return &bench.WritesReport{
		Settings: bench.WritesSettings{Step: 30 * time.Second, Rounds: 2, Rates: []float64{100, 500, 1000, 2000}},
		Steps: []bench.WriteStep{
			{Config: bench.ConfigChain, Rate: 100, Round: 1, Sustained: true, Writes: writesOf(3000, 3000, 30*time.Second), CPU: cpuPer(3000, 200, 300, 900, 500), Lags: quiet()},
			{Config: bench.ConfigChain, Rate: 100, Round: 2, Sustained: true, Writes: writesOf(3000, 3000, 30*time.Second), CPU: cpuPer(3000, 200, 300, 900, 500), Lags: quiet()},
			{Config: bench.ConfigCommand, Rate: 500, Sustained: true, Writes: writesOf(15000, 15000, 30*time.Second), CPU: cpuPer(15000, 200, 300, 0, 0)},
			{Config: bench.ConfigChain, Rate: 500, Sustained: true, Writes: writesOf(15000, 15000, 30*time.Second), CPU: cpuPer(15000, 200, 300, 250, 100),
				Hops: []bench.Freshness{hop(bench.HopWatermarkAccelerated, 30*ms), hop(bench.HopWatermarkMaterialized, 60*ms)}},
			{Config: bench.ConfigCommand, Rate: 1000, Sustained: true, Writes: writesOf(30000, 30000, 30*time.Second), CPU: cpuPer(30000, 200, 300, 0, 0)},
			{Config: bench.ConfigChain, Rate: 1000, Writes: writesOf(30000, 30000, 30*time.Second), CPU: cpuPer(30000, 200, 300, 80, 60),
				Why: "runtime 1 watermark (orders): lag grew", Hops: []bench.Freshness{hop(bench.HopWatermarkAccelerated, 45*ms), hop(bench.HopWatermarkMaterialized, 120*ms)},
				Lags:    []bench.HopLags{lags(bench.HopWatermarkAccelerated, 50, 10*ms, 45*ms), lags(bench.HopWatermarkMaterialized, 50, 20*ms, 120*ms)},
				CatchUp: []bench.CatchUp{{Hop: bench.HopWatermarkAccelerated, Time: 1500 * ms, OK: true}, {Hop: bench.HopWatermarkMaterialized, Time: 30 * time.Second, Why: "status 504"}}},
			{Config: bench.ConfigCommand, Rate: 2000, Writes: writesOf(50000, 50000, 30*time.Second), Why: "achieved 1667/s, under 95% of 2000/s",
				Failures: []bench.Reason{{Why: "status 503", Count: 1, Example: `{"error":"busy"}`}, {Why: "timeout", Count: 2}}},
		},
		Ceiling: &bench.Ceiling{Backlog: 99_999, CatchUp: []bench.CatchUp{{Hop: bench.HopWatermarkAccelerated, Time: 2 * time.Second, OK: true}, {Hop: bench.HopWatermarkMaterialized, Time: 4 * time.Second, OK: true}}},
		Overload: &bench.Overload{Rate: 1000, For: time.Minute, Runtimes: []bench.RuntimeRSS{
			{Process: bench.ProcAccelerated, FirstHalf: 100 << 20, SecondHalf: 105 << 20, Bounded: true},
			{Process: bench.ProcMaterialized, FirstHalf: 100 << 20, SecondHalf: 200 << 20}}},
		Lone: &bench.LoneCost{Orders: 80, CPU: []bench.ProcessCPU{{Process: bench.ProcAccelerated, PerOp: 900, NetPerOp: 700, HasNet: true}}},
	}
}

func TestWritesGoals(t *testing.T) {
	got := bench.WritesGoals(goalReport())
	want := []struct{ status, got string }{
		{bench.Miss, "0.50 (whole chain 500/s (not 1000/s), command side 1000/s (not 2000/s))"},
		{bench.Pass, "80 us (1 steps)"},
		{bench.Miss, "60 us (1 steps)"},
		{bench.Pass, "4.00 ms of 208 traced writes (2 steps)"},
		{bench.Miss, "12.00 ms of 208 traced writes (2 steps)"},
		{bench.Pass, "45.00 ms of 55 traced writes (1 steps)"},
		{bench.Miss, "120.00 ms of 55 traced writes (1 steps)"},
		{bench.Pass, "50,000 changes/s (a backlog of 99,999)"},
		{"figure", "25,000 changes/s (a backlog of 99,999)"},
		{bench.Miss, "1000 orders/s for 1m0s: runtime 1 peak 100MiB in the first half, 105MiB in the second; runtime 2 peak 100MiB in the first half, 200MiB in the second"},
		{"figure", "700 us (900 us gross, 80 lone changes)"},
		{"figure", "not measured"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d goals, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Status != w.status || got[i].Got != w.got {
			t.Errorf("goal %q = %s %q, want %s %q", got[i].Goal, got[i].Status, got[i].Got, w.status, w.got)
		}
	}
	if !strings.Contains(got[1].Goal, "at 1000 orders/s") || !strings.Contains(got[3].Goal, "p50 at 100 orders/s") {
		t.Errorf("goals %q, %q do not say their rate", got[1].Goal, got[3].Goal)
	}
}

func TestWritesGoalsNotMeasured(t *testing.T) {
	rep := &bench.WritesReport{Steps: []bench.WriteStep{
		{Config: bench.ConfigCommand, Rate: 250, Sustained: true},
		{Config: bench.ConfigChain, Rate: 250, Sustained: true},
	}}
	for _, g := range bench.WritesGoals(rep)[1:] {
		if g.Status != bench.NA && g.Status != "figure" || !strings.Contains(g.Got, "not measured") {
			t.Errorf("goal %q = %s %q, want not measured", g.Goal, g.Status, g.Got)
		}
	}
}

func TestWritesMarkdown(t *testing.T) {
	md := bench.WritesMarkdown(goalReport())
	for _, want := range []string{
		"| command side | 1000/s (not 2000/s) | 3 | 2000/s: achieved 1667/s, under 95% of 2000/s |",
		"| whole chain | 500/s (not 1000/s) | 4 | 1000/s: runtime 1 watermark (orders): lag grew |",
		"Whole chain / command side: **0.50** (goal >= 0.9).",
		// per rate: the command side first; the catch-up that did not end says so.
		"| 1000 | command side |  0 | 1000.0 | 30000, 201×30000 |",
		"| 1.50 / > 30 (status 504) | no: runtime 1 watermark (orders): lag grew |",
		// CPU: the command side's runtimes are off; the sums leave the load generator out.
		"| 1000 | command side | 200 | 300 | off | off | 50 | 500 | 10.0 |",
		"| 1000 | whole chain | 200 | 300 | 80 | 60 | 50 | 640 | 10.0 |",
		// the first message of each status not 2xx.
		"- writes answered status 503, first at 2000/s (command side): \"{\\\"error\\\":\\\"busy\\\"}\"\n",
		"| runtime 2 | 0 | 0B | 100MiB | 200MiB | 0B | **no** |",
		"| single-feed ceiling, runtime 1 >= 50,000 changes/s | 50,000 changes/s (a backlog of 99,999) | **PASS** |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "too short for numbers to quote") {
		t.Errorf("30 s steps in 2 rounds labelled too short")
	}
	short := goalReport()
	short.Settings.Step = 5 * time.Second
	if !strings.Contains(bench.WritesMarkdown(short), "too short for numbers to quote") {
		t.Errorf("5 s steps not labelled too short")
	}
}
