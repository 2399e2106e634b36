package bench

import (
	"fmt"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// Reasons a write was not seen on a hop, besides a transport error's kind and a
// non-2xx status.
const (
	ReasonNotRead    = "not read"                   // no read of the write was recorded
	ReasonRunEnded   = "still waiting at run's end" // cut by the end of the grace period
	ReasonNoPosition = "2xx without Spice-Position" // nothing to verify the answer by
)

// Write is one acknowledged order: its read-your-writes token and when the writer
// held it. Times are offsets from the run's start, on the monotonic clock.
type Write struct {
	Token position.LSN  `json:"token"`
	At    time.Duration `json:"at_ns"`
}

// Answer is a hop's answer to the read of one write, sent with
// Spice-Min-Position: the write's token.
type Answer struct {
	Hop   string
	Write Write
	// At is when the whole answer arrived, or the read failed; an offset from the
	// run's start as Write.At.
	At time.Duration
	// Status is the HTTP status, or ErrorStatus when no answer came.
	Status int
	// Err is the transport error's kind (Status ErrorStatus) or the first line of
	// a non-2xx answer's body.
	Err string
	// Position is the answer's Spice-Position; zero when it named none.
	Position position.LSN
	// Queued says the read waited for a free slot before it was sent: its lag
	// includes that wait.
	Queued bool
}

// Reason counts the writes a hop did not show for one reason, with the first
// message given for it.
type Reason struct {
	Why     string `json:"why"` // "status 504", "timeout", ReasonRunEnded
	Count   int    `json:"count"`
	Example string `json:"example,omitempty"`
}

// HopLags are the write-to-visible lags of one hop.
type HopLags struct {
	Hop string
	// Lags holds one lag per write that the hop was seen to reflect, in the order
	// of the writes given to Match.
	Lags []time.Duration
	// NotSeen are the writes whose read failed or was never made, by reason, most
	// frequent first.
	NotSeen []Reason
	// Violations are 2xx answers at a position below the token they were asked
	// for: the hop broke read-your-writes. Their writes count as not seen.
	Violations []Answer
	// Queued counts the answers behind Lags whose read waited for a free slot.
	Queued int
}

// Unseen is the number of writes not seen on the hop, violations included.
func (h HopLags) Unseen() int {
	n := len(h.Violations)
	for _, r := range h.NotSeen {
		n += r.Count
	}
	return n
}

// Match computes, for each hop, how long each write took to become visible there:
// the arrival of the hop's answer to the write's read (sent with the write's token
// as Spice-Min-Position) minus the time the write was acknowledged. The answer
// must be 2xx and report a position at or past the token; a lower one is a
// violation. A write without an answer on a hop, or whose answer failed, is not
// seen there. Answers are found by their Write, so neither writes nor answers need
// to be in order; answers of other hops, or beyond one per write, are ignored.
//
// Lags are measured from the client's view: they include the read's own latency
// and exclude the write's.
func Match(hops []string, writes []Write, answers []Answer) []HopLags {
	type key struct {
		hop string
		w   Write
	}
	byWrite := map[key][]Answer{}
	for _, a := range answers {
		k := key{a.Hop, a.Write}
		byWrite[k] = append(byWrite[k], a)
	}
	out := make([]HopLags, 0, len(hops))
	for _, hop := range hops {
		h := HopLags{Hop: hop, Lags: make([]time.Duration, 0, len(writes))}
		reasons := map[string]*Reason{}
		for _, w := range writes {
			k := key{hop, w}
			as := byWrite[k]
			if len(as) == 0 {
				note(reasons, ReasonNotRead, "")
				continue
			}
			byWrite[k] = as[1:]
			h.add(as[0], reasons)
		}
		h.NotSeen = sortedReasons(reasons)
		out = append(out, h)
	}
	return out
}

// add classifies one answer: a lag, a violation or a reason not to have seen it.
func (h *HopLags) add(a Answer, reasons map[string]*Reason) {
	switch {
	case a.Status == ErrorStatus:
		note(reasons, a.Err, "")
	case a.Status/100 != 2:
		note(reasons, fmt.Sprintf("status %d", a.Status), a.Err)
	case a.Position.IsZero():
		note(reasons, ReasonNoPosition, "")
	case a.Position < a.Write.Token:
		h.Violations = append(h.Violations, a)
	default:
		h.Lags = append(h.Lags, max(a.At-a.Write.At, 0))
		if a.Queued {
			h.Queued++
		}
	}
}

func note(reasons map[string]*Reason, why, example string) {
	r := reasons[why]
	if r == nil {
		r = &Reason{Why: why, Example: example}
		reasons[why] = r
	}
	r.Count++
}

// Freshness summarizes one hop's lags in one phase of a run. Writes is Reached +
// Unreached; Unreached includes the Violations.
type Freshness struct {
	Hop       string        `json:"hop"`
	Phase     string        `json:"phase"`
	Writes    int           `json:"writes"`
	Reached   int           `json:"reached"`
	Unreached int           `json:"unreached"`
	NotSeen   []Reason      `json:"not_seen,omitempty"`
	P50       time.Duration `json:"p50_ns"`
	P99       time.Duration `json:"p99_ns"`
	Max       time.Duration `json:"max_ns"`
	// Violations counts answers below their token; Violation describes the first.
	Violations int    `json:"violations"`
	Violation  string `json:"violation,omitempty"`
	// Queued counts the lags whose read waited for a free slot.
	Queued int `json:"queued,omitempty"`
}

// Summarize returns the percentiles of h's lags, from vegeta's estimator.
func Summarize(h HopLags, phase string) Freshness {
	f := Freshness{
		Hop: h.Hop, Phase: phase, Writes: len(h.Lags) + h.Unseen(), Reached: len(h.Lags), Unreached: h.Unseen(),
		NotSeen: h.NotSeen, Violations: len(h.Violations), Queued: h.Queued,
	}
	if len(h.Violations) > 0 {
		v := h.Violations[0]
		f.Violation = fmt.Sprintf("asked for %s, answered %d at %s", v.Write.Token, v.Status, v.Position)
	}
	if len(h.Lags) == 0 {
		return f
	}
	var lat vegeta.LatencyMetrics
	for _, l := range h.Lags {
		lat.Add(l)
	}
	f.P50, f.P99, f.Max = lat.Quantile(0.5), lat.Quantile(0.99), lat.Max
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
