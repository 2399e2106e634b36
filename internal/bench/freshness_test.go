package bench_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/position"
)

const ms = time.Millisecond

// answer is hop's 200 to the read of w, arriving at, reporting pos.
func answer(hop string, w bench.Write, at time.Duration, pos position.LSN) bench.Answer {
	return bench.Answer{Hop: hop, Write: w, At: at, Status: 200, Position: pos}
}

func TestMatch(t *testing.T) {
	hops := []string{bench.HopPostgres, bench.HopAccelerated, bench.HopMaterialized}
	w1, w2, w3 := bench.Write{Token: 100, At: 10 * ms}, bench.Write{Token: 200, At: 20 * ms}, bench.Write{Token: 300, At: 30 * ms}
	// Writes out of order of acknowledgement and of token.
	writes := []bench.Write{w3, w1, w2}
	// Answers out of order, as the reads' goroutines deliver them.
	answers := []bench.Answer{
		answer(bench.HopMaterialized, w3, 95*ms, 300),
		answer(bench.HopAccelerated, w3, 34*ms, 350), // past the token: fine
		answer(bench.HopAccelerated, w1, 12*ms, 100),
		answer(bench.HopPostgres, w1, 11*ms, 100),
		answer(bench.HopPostgres, w3, 33*ms, 300),
		answer(bench.HopPostgres, w2, 22*ms, 200),
		answer(bench.HopMaterialized, w1, 50*ms, 90), // below its token: a violation
		{Hop: bench.HopMaterialized, Write: w2, At: 10_020 * ms, Status: 504, Err: "position 0/C8 not reached in 10s"},
		{Hop: bench.HopAccelerated, Write: w2, At: 20 * ms, Status: bench.ErrorStatus, Err: "connection refused"},
		answer("elsewhere", w1, 11*ms, 1000), // a hop not asked for
	}
	answers[1].Queued = true
	got := bench.Match(hops, writes, answers)
	want := []bench.HopLags{
		{Hop: bench.HopPostgres, Lags: []time.Duration{3 * ms, 1 * ms, 2 * ms}},
		{Hop: bench.HopAccelerated, Lags: []time.Duration{4 * ms, 2 * ms}, Queued: 1,
			NotSeen: []bench.Reason{{Why: "connection refused", Count: 1}}},
		{Hop: bench.HopMaterialized, Lags: []time.Duration{65 * ms},
			NotSeen:    []bench.Reason{{Why: "status 504", Count: 1, Example: "position 0/C8 not reached in 10s"}},
			Violations: []bench.Answer{answers[6]}},
	}
	if got, want := len(got), len(want); got != want {
		t.Fatalf("hops=%d, want %d", got, want)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("hop %d=%+v, want %+v", i, got[i], want[i])
		}
	}
	if got, want := got[2].Unseen(), 2; got != want {
		t.Errorf("materialized unseen=%d, want %d", got, want)
	}
}

// A write without an answer (its read was never recorded) is not seen, and the
// reasons come most frequent first.
func TestMatch_NotRead(t *testing.T) {
	w1, w2, w3 := bench.Write{Token: 1, At: 0}, bench.Write{Token: 2, At: ms}, bench.Write{Token: 3, At: 2 * ms}
	answers := []bench.Answer{
		{Hop: "h", Write: w2, Status: bench.ErrorStatus, Err: bench.ReasonRunEnded},
		{Hop: "h", Write: w3, Status: bench.ErrorStatus, Err: bench.ReasonRunEnded},
	}
	got := bench.Match([]string{"h"}, []bench.Write{w1, w2, w3}, answers)[0]
	want := []bench.Reason{{Why: bench.ReasonRunEnded, Count: 2}, {Why: bench.ReasonNotRead, Count: 1}}
	if !reflect.DeepEqual(got.NotSeen, want) || len(got.Lags) != 0 {
		t.Fatalf("got %+v, want not seen %+v", got, want)
	}
	if got := bench.Match([]string{"h"}, nil, answers)[0]; len(got.Lags) != 0 || got.Unseen() != 0 {
		t.Fatalf("no writes: got %+v", got)
	}
}

// A 2xx answer without a position cannot be verified: not seen, never a lag.
func TestMatch_NoPosition(t *testing.T) {
	w := bench.Write{Token: 7, At: 0}
	got := bench.Match([]string{"h"}, []bench.Write{w}, []bench.Answer{answer("h", w, 5*ms, 0)})[0]
	if want := []bench.Reason{{Why: bench.ReasonNoPosition, Count: 1}}; !reflect.DeepEqual(got.NotSeen, want) || len(got.Lags) != 0 {
		t.Fatalf("got %+v, want not seen %+v", got, want)
	}
}

// Two writes that share a token (and time) each take one answer; a surplus answer
// is ignored.
func TestMatch_SameWriteTwice(t *testing.T) {
	w := bench.Write{Token: 5, At: 10 * ms}
	answers := []bench.Answer{answer("h", w, 13*ms, 5), answer("h", w, 17*ms, 6), answer("h", w, 90*ms, 6)}
	got := bench.Match([]string{"h"}, []bench.Write{w, w}, answers)[0]
	if want := []time.Duration{3 * ms, 7 * ms}; !slices.Equal(got.Lags, want) || got.Unseen() != 0 {
		t.Fatalf("got %+v, want lags %v", got, want)
	}
}

func TestSummarize(t *testing.T) {
	bad := bench.Answer{Hop: "accelerated", Write: bench.Write{Token: 0x1100}, Status: 200, Position: 0x10FF}
	h := bench.HopLags{
		Hop:        "accelerated",
		NotSeen:    []bench.Reason{{Why: "status 504", Count: 2, Example: "not reached"}},
		Violations: []bench.Answer{bad},
		Queued:     4,
	}
	for i := 1; i <= 100; i++ {
		h.Lags = append(h.Lags, time.Duration(i)*ms)
	}
	f := bench.Summarize(h, bench.PhaseLoad)
	if f.Writes != 103 || f.Reached != 100 || f.Unreached != 3 || f.Violations != 1 || f.Queued != 4 || f.Phase != bench.PhaseLoad {
		t.Fatalf("counts=%+v", f)
	}
	if got, want := f.Violation, "asked for 0/1100, answered 200 at 0/10FF"; got != want {
		t.Errorf("violation=%q, want %q", got, want)
	}
	if !reflect.DeepEqual(f.NotSeen, h.NotSeen) {
		t.Errorf("not seen=%+v, want %+v", f.NotSeen, h.NotSeen)
	}
	for _, c := range []struct {
		name      string
		got, want time.Duration
	}{{"p50", f.P50, 50 * ms}, {"p99", f.P99, 99 * ms}, {"max", f.Max, 100 * ms}} {
		if !within(c.got, c.want) {
			t.Errorf("%s=%v, want %v", c.name, c.got, c.want)
		}
	}
	none := bench.HopLags{Hop: "x", NotSeen: []bench.Reason{{Why: "timeout", Count: 3}}}
	if empty := bench.Summarize(none, bench.PhaseIdle); empty.P99 != 0 || empty.Writes != 3 || empty.Unreached != 3 {
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
