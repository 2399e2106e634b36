package chaos

import (
	"fmt"
	"sort"
	"time"
)

// Violation is a read or watermark sample that broke a guarantee.
type Violation struct {
	Kind   string // ViolationRYW, ViolationMonotonic or ViolationWatermark
	Detail string
}

// Kinds of Violation.
const (
	ViolationRYW       = "read-your-writes"
	ViolationMonotonic = "monotonic-read"
	ViolationWatermark = "watermark-decreased"
)

// ReadFindings is what CheckReads found in a round's answers.
type ReadFindings struct {
	RYW       []Violation
	Monotonic []Violation
	// ErrorSeconds counts, per endpoint, the distinct wall-clock seconds that a
	// request which got a non-2xx answer, or none, spanned.
	ErrorSeconds map[string]int
	// PlainErrorSeconds is ErrorSeconds of the requests sent without a
	// Spice-Min-Position: those a runtime serving its last data answers.
	PlainErrorSeconds map[string]int
	// Unexpected counts, per endpoint outside allowed, the non-2xx answers;
	// endpoints without any are absent.
	Unexpected map[string]int
}

// CheckReads judges a round's answers: read-your-writes (no 2xx answer below
// the Spice-Min-Position it was sent), monotonic reads (per reader and endpoint,
// the positions of 2xx answers never decrease; zero means unknown and is
// skipped), the error window per endpoint, and non-2xx answers on endpoints
// not in allowed (those that depend on the failed part). Reads must be in the
// order each reader issued them.
func CheckReads(reads []Read, allowed []string) ReadFindings {
	f := ReadFindings{ErrorSeconds: map[string]int{}, PlainErrorSeconds: map[string]int{}, Unexpected: map[string]int{}}
	ok := map[string]bool{}
	for _, ep := range allowed {
		ok[ep] = true
	}
	type key struct{ reader, endpoint string }
	last := map[key]Read{}
	seconds, plain := seconds{}, seconds{}
	for _, r := range reads {
		if !r.OK() {
			seconds.add(r)
			if r.MinPosition == 0 {
				plain.add(r)
			}
			if !ok[r.Endpoint] {
				f.Unexpected[r.Endpoint]++
			}
			continue
		}
		if r.MinPosition != 0 && r.Position < r.MinPosition {
			f.RYW = append(f.RYW, Violation{ViolationRYW, fmt.Sprintf("%s %s at %s answered %s, asked at least %s",
				r.Reader, r.Endpoint, r.At.Format("15:04:05.000"), r.Position, r.MinPosition)})
		}
		if r.Position == 0 {
			continue
		}
		k := key{r.Reader, r.Endpoint}
		if prev, seen := last[k]; seen && r.Position < prev.Position {
			f.Monotonic = append(f.Monotonic, Violation{ViolationMonotonic, fmt.Sprintf("%s %s went back from %s (%s) to %s (%s)",
				r.Reader, r.Endpoint, prev.Position, prev.At.Format("15:04:05.000"), r.Position, r.At.Format("15:04:05.000"))})
		}
		if prev, seen := last[k]; !seen || r.Position > prev.Position {
			last[k] = r
		}
	}
	for ep, s := range seconds {
		f.ErrorSeconds[ep] = len(s)
	}
	for ep, s := range plain {
		f.PlainErrorSeconds[ep] = len(s)
	}
	return f
}

// seconds are the wall-clock seconds failed requests spanned, per endpoint.
type seconds map[string]map[int64]bool

func (s seconds) add(r Read) {
	if s[r.Endpoint] == nil {
		s[r.Endpoint] = map[int64]bool{}
	}
	for sec := r.At.Unix(); sec <= r.At.Add(r.Took).Unix(); sec++ {
		s[r.Endpoint][sec] = true
	}
}

// CheckWatermarks reports every watermark that went below an earlier one of
// the same runtime and dataset. Zero (not loaded yet) is skipped. Samples must
// be in the order they were taken.
func CheckWatermarks(samples []WatermarkSample) []Violation {
	type key struct{ runtime, dataset string }
	last := map[key]WatermarkSample{}
	var out []Violation
	for _, s := range samples {
		if s.Watermark == 0 {
			continue
		}
		k := key{s.Runtime, s.Dataset}
		if prev, seen := last[k]; seen && s.Watermark < prev.Watermark {
			out = append(out, Violation{ViolationWatermark, fmt.Sprintf("%s %s went back from %s to %s at %s",
				s.Runtime, s.Dataset, prev.Watermark, s.Watermark, s.At.Format("15:04:05.000"))})
		}
		if prev, seen := last[k]; !seen || s.Watermark > prev.Watermark {
			last[k] = s
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Detail < out[j].Detail })
	return out
}

// ErrorsBeyond is how long after end the last failed request (non-2xx or no
// answer) of any endpoint ended; zero when every request that ended after end
// succeeded.
func ErrorsBeyond(reads []Read, end time.Time) time.Duration {
	var beyond time.Duration
	for _, r := range reads {
		if !r.OK() {
			beyond = max(beyond, r.At.Add(r.Took).Sub(end))
		}
	}
	return beyond
}
