package bench

import (
	"cmp"
	"fmt"
	"slices"
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
	// At is when the whole answer arrived, or the read failed; an offset from
	// the run's start as Write.At.
	At time.Duration
	// Status is the HTTP status, or ErrorStatus when no answer came; Err the
	// transport error's kind or the first line of a non-2xx answer's body.
	Status int
	Err    string
	// Position is the answer's Spice-Position; zero when it named none.
	Position position.LSN
	// Queued says the read waited for a free slot before it was sent: its lag
	// includes that wait.
	Queued bool
}

// Reason counts the writes a hop did not show (or requests that failed) for
// one reason, with the first message given for it.
type Reason struct {
	Why     string `json:"why"` // "status 504", "timeout", ReasonRunEnded
	Count   int    `json:"count"`
	Example string `json:"example,omitempty"`
}

// reasons counts Reasons by why, keeping the first example of each.
type reasons map[string]*Reason

func (rs reasons) note(why, example string) {
	if rs[why] == nil {
		rs[why] = &Reason{Why: why, Example: example}
	}
	rs[why].Count++
}

// sorted are the reasons, most frequent first.
func (rs reasons) sorted() []Reason {
	var out []Reason
	for _, r := range rs {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Reason) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Why, b.Why)) })
	return out
}

// HopLags are the write-to-visible lags of one hop.
type HopLags struct {
	Hop string
	// Lags holds one lag per write that the hop was seen to reflect, in the
	// order of the writes given to Match.
	Lags []time.Duration
	// NotSeen are the writes whose read failed or was never made, by reason,
	// most frequent first.
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

// Match computes, for each hop, how long each write took to become visible
// there: the arrival of the hop's answer to the write's read (sent with the
// write's token as Spice-Min-Position) minus the time the write was
// acknowledged. The answer must be 2xx and report a position at or past the
// token; a lower one is a violation. A write without an answer on a hop, or
// whose answer failed, is not seen there. Answers are found by their Write, so
// neither writes nor answers need to be in order; answers of other hops, or
// beyond one per write, are ignored.
//
// Lags are measured from the client's view: they include the read's own
// latency and exclude the write's.
func Match(hops []string, writes []Write, answers []Answer) []HopLags {
	type key struct {
		hop string
		w   Write
	}
	byWrite := map[key][]Answer{}
	for _, a := range answers {
		byWrite[key{a.Hop, a.Write}] = append(byWrite[key{a.Hop, a.Write}], a)
	}
	out := make([]HopLags, 0, len(hops))
	for _, hop := range hops {
		h, why := HopLags{Hop: hop, Lags: make([]time.Duration, 0, len(writes))}, reasons{}
		for _, w := range writes {
			as := byWrite[key{hop, w}]
			if len(as) == 0 {
				why.note(ReasonNotRead, "")
				continue
			}
			byWrite[key{hop, w}] = as[1:]
			switch a := as[0]; {
			case a.Status == ErrorStatus:
				why.note(a.Err, "")
			case a.Status/100 != 2:
				why.note(statusText(a.Status, ""), a.Err)
			case a.Position.IsZero():
				why.note(ReasonNoPosition, "")
			case a.Position < a.Write.Token:
				h.Violations = append(h.Violations, a)
			default:
				h.Lags = append(h.Lags, max(a.At-a.Write.At, 0))
				if a.Queued {
					h.Queued++
				}
			}
		}
		h.NotSeen = why.sorted()
		out = append(out, h)
	}
	return out
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
	var lat vegeta.LatencyMetrics
	for _, l := range h.Lags {
		lat.Add(l)
	}
	if len(h.Lags) > 0 {
		f.P50, f.P99, f.Max = lat.Quantile(0.5), lat.Quantile(0.99), lat.Max
	}
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

// freshness summarizes the lags on each hop of the writes acknowledged in
// [from, to), in phase.
func freshness(hops []string, writes []Write, answers []Answer, from, to time.Duration, phase string) []Freshness {
	var out []Freshness
	if in := Between(writes, from, to); len(in) > 0 {
		for _, h := range Match(hops, in, answers) {
			out = append(out, Summarize(h, phase))
		}
	}
	return out
}
