package bench_test

import (
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// A late hit is skipped, not sent in a burst; a new rate holds from the hit
// after the one already scheduled.
func TestRatePacer(t *testing.T) {
	p := bench.NewRatePacer(10)
	for i, c := range []struct {
		elapsed, wait time.Duration
		skipped       int64
	}{
		{0, 0, 0},
		{0, 100 * ms, 0},
		{1000 * ms, 0, 8}, // due at 200 ms: the eight hits up to 900 ms are skipped
		{1000 * ms, 100 * ms, 8},
	} {
		wait, stop := p.Pace(c.elapsed, 0)
		if wait != c.wait || stop || p.Skipped() != c.skipped {
			t.Fatalf("pace %d at %s = %s, %v, skipped %d; want %s, false, %d", i, c.elapsed, wait, stop, p.Skipped(), c.wait, c.skipped)
		}
	}
	p.SetRate(20) // the hit due at 1.2 s keeps its time; the one after is 50 ms later
	if w1, _ := p.Pace(1200*ms, 0); w1 != 0 {
		t.Fatalf("the hit due at 1.2 s waits %s", w1)
	}
	if wait, _ := p.Pace(1200*ms, 0); wait != 50*ms {
		t.Fatalf("at 20/s the next hit waits %s, want 50ms", wait)
	}
}

func TestRSSOf(t *testing.T) {
	var samples []bench.RSSSample
	for s := range 10 {
		at := time.Duration(s) * time.Second
		samples = append(samples,
			bench.RSSSample{At: at, Process: bench.ProcAccelerated, Bytes: 100<<20 + int64(s%2)<<20}, // flat
			bench.RSSSample{At: at, Process: bench.ProcMaterialized, Bytes: int64(100+20*s) << 20})   // grows
	}
	got := bench.RSSOf(samples, 10*time.Second)
	if len(got) != 2 || !got[0].Bounded || got[1].Bounded {
		t.Fatalf("RSSOf = %+v, want runtime 1 bounded, runtime 2 not", got)
	}
	if g := got[1]; g.Samples != 10 || g.Start != 100<<20 || g.FirstHalf != 180<<20 || g.SecondHalf != 280<<20 || g.End != 280<<20 {
		t.Fatalf("runtime 2 = %+v", g)
	}
}

// PoolAt takes every step of a rate together: CPU over all their orders, the
// lags of all their traced writes.
func TestPoolAt(t *testing.T) {
	step := func(orders int64, us float64, lag time.Duration) bench.WriteStep {
		return bench.WriteStep{Rate: 100, Writes: bench.Summary{OK: orders},
			CPU:  bench.StepCPU{Processes: []bench.ProcessCPU{{Process: bench.ProcAccelerated, Seconds: us * float64(orders) / 1e6}}},
			Lags: []bench.HopLags{lags(bench.HopWatermarkAccelerated, 9, lag, lag)}}
	}
	p := bench.PoolAt([]bench.WriteStep{step(1000, 100, 10*ms), step(3000, 300, 20*ms), {Rate: 200}}, 100)
	if p.Steps != 2 || len(p.CPU) != 1 || p.CPU[0].PerOp != 250 {
		t.Fatalf("pooled CPU %+v over %d steps, want 250 us over 2", p.CPU, p.Steps)
	}
	if len(p.Hops) != 1 || p.Hops[0].Writes != 28 || p.Hops[0].Max != 20*ms {
		t.Fatalf("pooled lags %+v, want the 28 writes of both steps", p.Hops)
	}
}
