package bench

import (
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// Write is one acknowledged order: its read-your-writes token and when the writer
// held it. Times are offsets from the run's start, on the monotonic clock.
type Write struct {
	Token position.LSN  `json:"token"`
	At    time.Duration `json:"at_ns"`
}

// Observation is one answer of a hop: the position it reported and when it
// arrived.
type Observation struct {
	Hop      string
	At       time.Duration
	Position position.LSN
}

// HopLags are the write-to-visible lags of one hop.
type HopLags struct {
	Hop string
	// Lags holds one lag per write that the hop was seen to reflect, in the order
	// of the writes given to Match.
	Lags []time.Duration
	// Unreached counts the writes the hop never reported, within what was observed.
	Unreached int
}

// Match computes, for each hop, how long each write took to become visible there:
// the arrival of the earliest observation of that hop reporting a position at or
// past the write's token, minus the time the write was acknowledged. A write seen
// before its own acknowledgement arrived (a read that raced the write's answer) has
// lag zero. Observations of unknown position (zero) are ignored. Neither writes nor
// observations need to be in order.
//
// Lags are measured from the client's view: they include the read's own latency
// and up to one polling interval, and exclude the write's latency.
func Match(hops []string, writes []Write, obs []Observation) []HopLags {
	byHop := map[string][]Observation{}
	for _, o := range obs {
		if !o.Position.IsZero() {
			byHop[o.Hop] = append(byHop[o.Hop], o)
		}
	}
	out := make([]HopLags, 0, len(hops))
	for _, hop := range hops {
		out = append(out, matchHop(hop, writes, byHop[hop]))
	}
	return out
}

// matchHop sorts the hop's observations by position, highest first, and keeps
// the earliest arrival among all positions at or above each one; a token is then a
// binary search away.
func matchHop(hop string, writes []Write, obs []Observation) HopLags {
	slices.SortFunc(obs, func(a, b Observation) int {
		switch {
		case a.Position > b.Position:
			return -1
		case a.Position < b.Position:
			return 1
		}
		return 0
	})
	earliest := make([]time.Duration, len(obs))
	for i, o := range obs {
		earliest[i] = o.At
		if i > 0 && earliest[i-1] < o.At {
			earliest[i] = earliest[i-1]
		}
	}
	h := HopLags{Hop: hop, Lags: make([]time.Duration, 0, len(writes))}
	for _, w := range writes {
		// The first observation below the token; all before it are at or above.
		i, _ := slices.BinarySearchFunc(obs, w.Token, func(o Observation, t position.LSN) int {
			if o.Position >= t {
				return -1
			}
			return 1
		})
		if i == 0 {
			h.Unreached++
			continue
		}
		h.Lags = append(h.Lags, max(earliest[i-1]-w.At, 0))
	}
	return h
}

// Freshness summarizes one hop's lags in one phase of a run.
type Freshness struct {
	Hop       string        `json:"hop"`
	Phase     string        `json:"phase"`
	Writes    int           `json:"writes"`
	Reached   int           `json:"reached"`
	Unreached int           `json:"unreached"`
	P50       time.Duration `json:"p50_ns"`
	P99       time.Duration `json:"p99_ns"`
	Max       time.Duration `json:"max_ns"`
}

// Summarize returns the percentiles of h's lags from an HDR histogram.
func Summarize(h HopLags, phase string) Freshness {
	f := Freshness{Hop: h.Hop, Phase: phase, Writes: len(h.Lags) + h.Unreached, Reached: len(h.Lags), Unreached: h.Unreached}
	if len(h.Lags) == 0 {
		return f
	}
	hist := hdrhistogram.New(1, int64(MaxLatency/unitLatency), sigFigures)
	for _, l := range h.Lags {
		_ = hist.RecordValue(clampLatency(l))
	}
	f.P50 = time.Duration(hist.ValueAtQuantile(50)) * unitLatency
	f.P99 = time.Duration(hist.ValueAtQuantile(99)) * unitLatency
	f.Max = time.Duration(hist.Max()) * unitLatency
	return f
}

// Between returns the writes acknowledged in [from, to).
func Between(writes []Write, from, to time.Duration) []Write {
	var out []Write
	for _, w := range writes {
		if w.At >= from && w.At < to {
			out = append(out, w)
		}
	}
	return out
}
