package bench_test

import (
	"math"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// result makes a scenario result of n requests over elapsed, with p99 and the
// given count of 500s.
func result(t bench.Target, n int64, elapsed, p99 time.Duration, failed int64) bench.ScenarioResult {
	codes := map[int]int64{200: n - failed}
	if failed > 0 {
		codes[500] = failed
	}
	return bench.ScenarioResult{Target: t, Summary: bench.Summary{
		Requests: n, OK: n - failed, StatusCodes: codes, Elapsed: elapsed, Bytes: n * 14,
		Fastest: time.Millisecond / 2, Average: p99 / 3, Slowest: 2 * p99, P50: p99 / 4, P90: p99 / 2, P99: p99, P999: p99 + p99/2,
	}}
}

// fixedSize is one size of a run: /noop 20000 req/s, /ranking 500, accelerated
// 4000 / 2000, materialized 12000 / 6000.
func fixedSize() bench.SizeResult {
	sc := bench.Scenarios()
	rps := []int64{20000, 500, 4000, 2000, 12000, 6000}
	var closed []bench.ScenarioResult
	for i, t := range sc {
		var failed int64
		if t.Path == bench.PathRanking {
			failed = 47
		}
		closed = append(closed, result(t, rps[i]*2, 2*time.Second, 8*time.Millisecond, failed))
	}
	bench.Ratios(closed)
	open := []bench.ScenarioResult{result(sc[4], 2000, 10*time.Second, 3*time.Millisecond, 0)}
	return bench.SizeResult{
		Orders: 100_000,
		Closed: closed,
		Open:   []bench.OpenResult{{Rate: 200, Results: open}},
		Freshness: []bench.Freshness{
			{Hop: bench.HopAccelerated, Phase: bench.PhaseIdle, Writes: 10, Reached: 10, P50: 5 * ms, P99: 9 * ms, Max: 9 * ms},
			{Hop: bench.HopAccelerated, Phase: bench.PhaseLoad, Writes: 100, Reached: 100, P50: 20 * ms, P99: 80 * ms, Max: 90 * ms},
			{Hop: bench.HopMaterialized, Phase: bench.PhaseLoad, Writes: 100, Reached: 99, Unreached: 1, P50: 60 * ms, P99: 200 * ms, Max: 300 * ms,
				NotSeen: []bench.Reason{{Why: "status 504", Count: 1, Example: "position 0/1100 not reached in 10s"}}},
		},
		Writer: bench.Summary{Requests: 100, OK: 100, StatusCodes: map[int]int64{201: 100}, Elapsed: time.Second},
		Memory: []bench.Memory{{Process: bench.ProcAccelerated, Bytes: 150 << 20, Source: "container of accelerated"}, {Process: bench.ProcMaterialized, Source: "n/a"}},
	}
}

func TestRatios(t *testing.T) {
	s := fixedSize()
	// /ranking answered 953 of its 1000 requests 2xx: 476.5 good req/s.
	for _, c := range []struct {
		i              int
		vsRank, ofNoop float64
	}{
		{0, 20000 / 476.5, 1},
		{1, 1, 476.5 / 20000},
		{3, 2000 / 476.5, 0.1},
		{4, 12000 / 476.5, 0.6},
	} {
		r := s.Closed[c.i]
		if math.Abs(r.VsRanking-c.vsRank) > 1e-9 || math.Abs(r.OfCeiling-c.ofNoop) > 1e-9 {
			t.Errorf("%s: vs /ranking %v, of ceiling %v; want %v, %v", r.Target.Name, r.VsRanking, r.OfCeiling, c.vsRank, c.ofNoop)
		}
	}
}

// A path that fails fast is not fast: ratios compare 2xx answers only.
func TestRatios_Failing(t *testing.T) {
	rs := []bench.ScenarioResult{
		result(bench.Target{Name: "r", Path: bench.PathRanking}, 100, time.Second, ms, 0),
		result(bench.Target{Name: "m", Path: bench.PathMaterialized}, 5000, time.Second, ms, 5000),
	}
	bench.Ratios(rs)
	if got := rs[1].VsRanking; got != 0 {
		t.Fatalf("ratio of a path without 2xx=%v, want 0", got)
	}
	if g := bench.Goals(bench.SizeResult{Closed: rs}, 100)[0]; g.Status != bench.Miss {
		t.Fatalf("goal on a failing path=%+v, want a miss", g)
	}
}

func TestRatios_NoBaseline(t *testing.T) {
	rs := []bench.ScenarioResult{result(bench.Target{Name: "m", Path: bench.PathMaterialized}, 100, time.Second, ms, 0)}
	bench.Ratios(rs)
	if rs[0].VsRanking != 0 || rs[0].OfCeiling != 0 {
		t.Fatalf("ratios=%v/%v, want 0 without /ranking and /noop", rs[0].VsRanking, rs[0].OfCeiling)
	}
}

func TestGoals(t *testing.T) {
	goals := bench.Goals(fixedSize(), 100)
	want := []string{
		bench.Pass, // materialized 25x /ranking
		bench.Pass, // 60% of /noop
		bench.Miss, // accelerated cache off 4.2x < 5x
		bench.Pass, // p99 8 ms
		bench.Miss, // 47 500s on /ranking
		bench.Pass, // accelerated p99 80 ms
		bench.Miss, // one write never seen end to end
		bench.NA,   // CPU per materialized read: not measured
		bench.Pass, // 60% of /noop
		bench.NA,   // runtime 1 watermark: not measured
		bench.NA,   // runtime 2 watermark: not measured
	}
	if len(goals) != len(want) {
		t.Fatalf("goals=%d, want %d", len(goals), len(want))
	}
	for i, g := range goals {
		if g.Status != want[i] {
			t.Errorf("goal %q=%s (%s), want %s", g.Goal, g.Status, g.Got, want[i])
		}
	}
}

// An answer below its token fails the lag goal whatever the percentiles.
func TestGoals_Violation(t *testing.T) {
	s := fixedSize()
	s.Freshness[1].Reached, s.Freshness[1].Unreached, s.Freshness[1].Violations = 98, 2, 2
	g := bench.Goals(s, 100)[5]
	if got, want := g.Status, bench.Miss; got != want {
		t.Fatalf("accelerated lag goal=%s (%s), want %s", got, g.Got, want)
	}
	if got, want := g.Got, "p99 80.00 ms under load (idle: 9.00 ms), READ-YOUR-WRITES VIOLATED by 2 answers"; got != want {
		t.Fatalf("got=%q, want %q", got, want)
	}
	end := bench.Goals(fixedSize(), 100)[6]
	if got, want := end.Got, "p99 200.00 ms under load, 1 of 100 writes not seen (status 504×1)"; got != want {
		t.Fatalf("end to end got=%q, want %q", got, want)
	}
}

func TestGoals_NotMeasured(t *testing.T) {
	for _, g := range bench.Goals(bench.SizeResult{}, 100) {
		if g.Status != bench.NA {
			t.Errorf("goal %q=%s, want n/a when nothing ran", g.Goal, g.Status)
		}
	}
}
