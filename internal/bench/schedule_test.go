package bench_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

func TestOrder(t *testing.T) {
	turns := bench.Order(3, 3)
	var got []int
	for _, tr := range turns {
		got = append(got, tr.Scenario)
	}
	if want := []int{0, 1, 2, 1, 2, 0, 2, 0, 1}; !slices.Equal(got, want) {
		t.Fatalf("order=%v, want %v", got, want)
	}
	for i, tr := range turns {
		if got, want := tr.Round, i/3; got != want {
			t.Fatalf("turn %d round=%d, want %d", i, got, want)
		}
	}
}

func TestOrder_EveryScenarioOncePerRound(t *testing.T) {
	const scenarios, rounds = 6, 10
	turns := bench.Order(scenarios, rounds)
	if got, want := len(turns), scenarios*rounds; got != want {
		t.Fatalf("turns=%d, want %d", got, want)
	}
	first := map[int]int{}
	for r := range rounds {
		seen := map[int]bool{}
		for _, tr := range turns[r*scenarios : (r+1)*scenarios] {
			seen[tr.Scenario] = true
		}
		if got, want := len(seen), scenarios; got != want {
			t.Fatalf("round %d runs %d scenarios, want %d", r, got, want)
		}
		first[turns[r*scenarios].Scenario]++
	}
	if got, want := len(first), scenarios; got != want {
		t.Fatalf("%d scenarios ever run first, want all %d", got, want)
	}
}

func TestOrder_Empty(t *testing.T) {
	if got := bench.Order(0, 3); got != nil {
		t.Fatalf("order=%v, want nil", got)
	}
}

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		total, parts int
		want         []int
	}{
		{20000, 10, []int{2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000}},
		{10, 4, []int{3, 3, 2, 2}},
		{2, 4, []int{1, 1, 0, 0}},
		{0, 2, []int{0, 0}},
	} {
		if got := bench.Split(c.total, c.parts); !slices.Equal(got, c.want) {
			t.Errorf("Split(%d, %d)=%v, want %v", c.total, c.parts, got, c.want)
		}
	}
}

func TestSplitDuration(t *testing.T) {
	parts := bench.SplitDuration(10*time.Second+1, 3)
	var sum time.Duration
	for _, p := range parts {
		sum += p
	}
	if got, want := sum, 10*time.Second+1; got != want {
		t.Fatalf("sum=%v, want %v", got, want)
	}
}
