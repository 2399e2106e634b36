package bench_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/position"
)

const ms = time.Millisecond

func TestMatch(t *testing.T) {
	hops := []string{bench.HopPostgres, bench.HopAccelerated, bench.HopMaterialized}
	// Writes out of order of acknowledgement and of token.
	writes := []bench.Write{
		{Token: 300, At: 30 * ms},
		{Token: 100, At: 10 * ms},
		{Token: 200, At: 20 * ms},
		{Token: 900, At: 40 * ms}, // never reached anywhere
	}
	// Observations out of order, as pollers of several goroutines deliver them.
	obs := []bench.Observation{
		{Hop: bench.HopMaterialized, At: 70 * ms, Position: 300},
		{Hop: bench.HopAccelerated, At: 35 * ms, Position: 300},
		{Hop: bench.HopAccelerated, At: 12 * ms, Position: 100},
		{Hop: bench.HopPostgres, At: 9 * ms, Position: 100}, // seen before its ack arrived: lag 0
		{Hop: bench.HopPostgres, At: 31 * ms, Position: 300},
		{Hop: bench.HopMaterialized, At: 40 * ms, Position: 150},
		{Hop: bench.HopAccelerated, At: 25 * ms, Position: 250},
		{Hop: bench.HopMaterialized, At: 99 * ms, Position: 0}, // unknown position: ignored
		{Hop: "elsewhere", At: 1 * ms, Position: 1000},         // a hop not asked for
	}
	got := bench.Match(hops, writes, obs)
	want := []bench.HopLags{
		{Hop: bench.HopPostgres, Lags: []time.Duration{1 * ms, 0, 11 * ms}, Unreached: 1},
		{Hop: bench.HopAccelerated, Lags: []time.Duration{5 * ms, 2 * ms, 5 * ms}, Unreached: 1},
		{Hop: bench.HopMaterialized, Lags: []time.Duration{40 * ms, 30 * ms, 50 * ms}, Unreached: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("hops=%d, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Hop != want[i].Hop || !slices.Equal(got[i].Lags, want[i].Lags) || got[i].Unreached != want[i].Unreached {
			t.Errorf("hop %d=%+v, want %+v", i, got[i], want[i])
		}
	}
}

// A later, higher position counts for a lower token only if no earlier answer
// already reflected it; an answer that went back (a lagging replica) changes
// nothing.
func TestMatch_EarliestAtOrAbove(t *testing.T) {
	writes := []bench.Write{{Token: 100, At: 0}}
	obs := []bench.Observation{
		{Hop: "h", At: 50 * ms, Position: 100},
		{Hop: "h", At: 20 * ms, Position: 500}, // earlier and higher: this one counts
		{Hop: "h", At: 30 * ms, Position: 90},  // went back: irrelevant
	}
	got := bench.Match([]string{"h"}, writes, obs)
	if want := []time.Duration{20 * ms}; !slices.Equal(got[0].Lags, want) {
		t.Fatalf("lags=%v, want %v", got[0].Lags, want)
	}
}

func TestMatch_Nothing(t *testing.T) {
	got := bench.Match([]string{"h"}, []bench.Write{{Token: 1, At: 0}, {Token: 2, At: 0}}, nil)
	if got[0].Unreached != 2 || len(got[0].Lags) != 0 {
		t.Fatalf("got %+v, want 2 unreached", got[0])
	}
	if got := bench.Match([]string{"h"}, nil, []bench.Observation{{Hop: "h", Position: 5}}); len(got[0].Lags) != 0 || got[0].Unreached != 0 {
		t.Fatalf("no writes: got %+v", got[0])
	}
}

// Large inputs take the binary search path; compare with the obvious quadratic
// definition.
func TestMatch_AgreesWithDefinition(t *testing.T) {
	var writes []bench.Write
	var obs []bench.Observation
	for i := range 300 {
		writes = append(writes, bench.Write{Token: position.LSN(1 + (i*37)%290), At: time.Duration((i*53)%300) * ms})
		obs = append(obs, bench.Observation{Hop: "h", At: time.Duration((i*71)%400) * ms, Position: position.LSN((i * 29) % 280)})
	}
	got := bench.Match([]string{"h"}, writes, obs)[0]
	var want []time.Duration
	unreached := 0
	for _, w := range writes {
		best := time.Duration(-1)
		for _, o := range obs {
			if o.Position != 0 && o.Position >= w.Token && (best < 0 || o.At < best) {
				best = o.At
			}
		}
		if best < 0 {
			unreached++
			continue
		}
		want = append(want, max(best-w.At, 0))
	}
	if !slices.Equal(got.Lags, want) || got.Unreached != unreached {
		t.Fatalf("got %d lags, %d unreached; want %d, %d", len(got.Lags), got.Unreached, len(want), unreached)
	}
}

func TestSummarize(t *testing.T) {
	h := bench.HopLags{Hop: "accelerated", Unreached: 2}
	for i := 1; i <= 100; i++ {
		h.Lags = append(h.Lags, time.Duration(i)*ms)
	}
	f := bench.Summarize(h, bench.PhaseLoad)
	if f.Writes != 102 || f.Reached != 100 || f.Unreached != 2 || f.Phase != bench.PhaseLoad {
		t.Fatalf("counts=%+v", f)
	}
	for _, c := range []struct {
		name      string
		got, want time.Duration
	}{{"p50", f.P50, 50 * ms}, {"p99", f.P99, 99 * ms}, {"max", f.Max, 100 * ms}} {
		if !within(c.got, c.want) {
			t.Errorf("%s=%v, want %v", c.name, c.got, c.want)
		}
	}
	if empty := bench.Summarize(bench.HopLags{Hop: "x", Unreached: 3}, bench.PhaseIdle); empty.P99 != 0 || empty.Writes != 3 {
		t.Fatalf("empty=%+v", empty)
	}
}

func TestBetween(t *testing.T) {
	writes := []bench.Write{{Token: 1, At: 5 * ms}, {Token: 2, At: 10 * ms}, {Token: 3, At: 15 * ms}}
	got := bench.Between(writes, 10*ms, 15*ms)
	if len(got) != 1 || got[0].Token != 2 {
		t.Fatalf("between=%v, want the write at 10ms only", got)
	}
}
