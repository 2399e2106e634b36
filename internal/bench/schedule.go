package bench

import "time"

// Turn is one scenario's slice of one round.
type Turn struct {
	Round    int
	Scenario int // index into the run's scenarios
}

// Order returns the turns of an interleaved run: rounds of every scenario, each
// round starting one scenario later than the one before, so that no scenario always
// runs first (on a cold cache) or always right after the heaviest one. Machine
// drift over the run then spreads over all scenarios alike.
func Order(scenarios, rounds int) []Turn {
	if scenarios <= 0 || rounds <= 0 {
		return nil
	}
	turns := make([]Turn, 0, scenarios*rounds)
	for r := range rounds {
		for i := range scenarios {
			turns = append(turns, Turn{Round: r, Scenario: (r + i) % scenarios})
		}
	}
	return turns
}

// Split divides total into parts that differ by at most one, the larger first, so
// a scenario's requests spread over the rounds and add up to total exactly.
func Split(total, parts int) []int {
	if parts <= 0 {
		return nil
	}
	out := make([]int, parts)
	for i := range out {
		out[i] = total / parts
		if i < total%parts {
			out[i]++
		}
	}
	return out
}

// SplitDuration divides d into parts equal up to a nanosecond, adding up to d.
func SplitDuration(d time.Duration, parts int) []time.Duration {
	ns := Split(int(d), parts)
	out := make([]time.Duration, len(ns))
	for i, n := range ns {
		out[i] = time.Duration(n)
	}
	return out
}
