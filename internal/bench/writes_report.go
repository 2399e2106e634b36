package bench

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// What a step must show to count as sustained.
const (
	// MinAchieved is the least share of the asked rate that must be answered
	// 2xx per second of the step.
	MinAchieved = 0.95
	// MaxLagGrowth is the most a hop's lag may grow per second of the step: a
	// lag that grows by g per second means the hop applies about 1/(1+g) of
	// the rate, so 0.05 matches MinAchieved.
	MaxLagGrowth = 0.05
	// MinLagSlack is the least growth tolerated, whatever the step's length:
	// the median of a window of a second or two moves by tens of milliseconds
	// with the batching alone.
	MinLagSlack = 100 * time.Millisecond
	// trendWindow is the share of the step at its start and at its end whose
	// traced writes the lag is compared over.
	trendWindow = 0.2
	// rampPrecision ends the ramp once the bracket is this narrow.
	rampPrecision = 0.05
)

// WritesReport is a whole write benchmark run.
type WritesReport struct {
	Header
	Settings WritesSettings `json:"settings"`
	Steps    []WriteStep    `json:"steps"`
	Lone     *LoneCost      `json:"lone,omitempty"`
	Ceiling  *Ceiling       `json:"ceiling,omitempty"`
	Overload *Overload      `json:"overload,omitempty"`
	// Goals are the write path's goals and figures, from every step of a rate
	// pooled (WritesGoals).
	Goals []Goal `json:"goals"`
}

// WriteStep is one configuration at one rate.
type WriteStep struct {
	Config   string        `json:"config"` // ConfigCommand, ConfigChain
	Rate     float64       `json:"rate"`   // asked, orders per second
	Phase    string        `json:"phase"`  // StepList, StepRamp
	Round    int           `json:"round"`
	Duration time.Duration `json:"duration_ns"`
	// Writes are the POST /orders, latency from each write's due time;
	// Failures those not 2xx, by status, with the first message of each.
	Writes   Summary  `json:"writes"`
	Failures []Reason `json:"failures,omitempty"`
	// Hops are the write-to-visible lags of the traced writes per runtime
	// watermark (chain only); Traced counts those writes.
	Hops   []Freshness `json:"hops,omitempty"`
	Traced int         `json:"traced,omitempty"`
	// Trends compare each hop's lag at the step's start and end (chain only).
	Trends []HopTrend `json:"trends,omitempty"`
	CPU    StepCPU    `json:"cpu"` // per 2xx write
	// Memory is each process's memory when the writes stopped (the chain: once
	// the runtimes caught up).
	Memory []Memory `json:"memory,omitempty"`
	// CatchUp is how long each runtime took to cover the last write: after the
	// writes stopped (chain), after being switched on again (command side).
	CatchUp   []CatchUp `json:"catch_up,omitempty"`
	Sustained bool      `json:"sustained"`
	Why       string    `json:"why,omitempty"` // why not

	// Lags are every traced write's lag, pooled over the steps of a rate.
	Lags []HopLags `json:"-"`
}

// StepCPU is each process's CPU per order over Wall: the step for the command
// side; for the chain, the step and the catch-up after it.
type StepCPU struct {
	Wall      time.Duration `json:"wall_ns"`
	Processes []ProcessCPU  `json:"processes"`
}

// LoneCost is F: each process's CPU per lone change (NetPerOp: less its idle
// CPU), from Orders lone orders over Window.
type LoneCost struct {
	Window time.Duration `json:"window_ns"`
	Orders int64         `json:"orders"`
	CPU    []ProcessCPU  `json:"cpu"`
}

// Ceiling is the single-feed ceiling: how fast each runtime caught up a
// backlog of one-row transactions written while it was off.
type Ceiling struct {
	Backlog int           `json:"backlog"`
	Wrote   time.Duration `json:"wrote_ns"` // how long Postgres took to write it
	CatchUp []CatchUp     `json:"catch_up,omitempty"`
	Why     string        `json:"why,omitempty"` // what makes the figure doubtful
}

// Rate is the changes per second hop caught up at; 0 when it did not.
func (c *Ceiling) Rate(hop string) float64 {
	for _, cu := range c.CatchUp {
		if cu.Hop == hop && cu.OK {
			return ratio(float64(c.Backlog+1), cu.Time.Seconds())
		}
	}
	return 0
}

// Overload is the whole chain written at twice its sustained rate.
type Overload struct {
	Base     float64       `json:"base"` // the whole chain's sustained rate
	Rate     float64       `json:"rate"`
	For      time.Duration `json:"for_ns"`
	Why      string        `json:"why,omitempty"`
	Writes   Summary       `json:"writes"`
	Samples  []RSSSample   `json:"samples"`
	Runtimes []RuntimeRSS  `json:"runtimes"`
	CatchUp  []CatchUp     `json:"catch_up,omitempty"`
}

// RSSSample is one runtime's resident memory during the overload.
type RSSSample struct {
	At      time.Duration `json:"at_ns"`
	Process string        `json:"process"`
	Bytes   int64         `json:"bytes"`
}

// RuntimeRSS summarizes one runtime's memory over the overload.
type RuntimeRSS struct {
	Process                           string `json:"process"`
	Samples                           int    `json:"samples"`
	Start, FirstHalf, SecondHalf, End int64
	Bounded                           bool `json:"bounded"`
}

// RSSOf summarizes each runtime's samples of an overload of length d: bounded
// when the peak of its second half is at most 10% (and at least 16 MiB) above
// the peak of its first half. Memory that grows with the backlog grows
// through both halves; a bounded runtime levels off once its buffers are full.
func RSSOf(samples []RSSSample, d time.Duration) []RuntimeRSS {
	var out []RuntimeRSS
	for _, p := range []string{ProcAccelerated, ProcMaterialized} {
		m := RuntimeRSS{Process: p}
		for _, s := range samples {
			if s.Process != p {
				continue
			}
			if m.Samples++; m.Start == 0 {
				m.Start = s.Bytes
			}
			if s.At < d/2 {
				m.FirstHalf = max(m.FirstHalf, s.Bytes)
			} else {
				m.SecondHalf = max(m.SecondHalf, s.Bytes)
			}
			m.End = s.Bytes
		}
		m.Bounded = m.FirstHalf > 0 && m.SecondHalf > 0 && m.SecondHalf <= max(m.FirstHalf*11/10, m.FirstHalf+16<<20)
		out = append(out, m)
	}
	return out
}

// HopTrend is one hop's lag at the start and at the end of a step: the median
// write-to-visible of the traced writes acknowledged in the first and the last
// fifth of it, and how many of those the hop did not show.
type HopTrend struct {
	Hop         string        `json:"hop"`
	Start       time.Duration `json:"start_ns"`
	End         time.Duration `json:"end_ns"`
	StartWrites int           `json:"start_writes"`
	EndWrites   int           `json:"end_writes"`
	Unseen      int           `json:"unseen"` // in either window
	// Slack is the growth tolerated: MaxLagGrowth per second between the two
	// windows' middles, at least MinLagSlack.
	Slack time.Duration `json:"slack_ns"`
}

// Grew says whether the lag grew by more than the slack, or a write of either
// window was not seen.
func (t HopTrend) Grew() bool {
	return t.Unseen > 0 || t.StartWrites == 0 || t.EndWrites == 0 || t.End > t.Start+t.Slack
}

// TrendOf compares hop's lag over the first and the last fifth of [from, to).
func TrendOf(hop string, traced []Write, answers []Answer, from, to time.Duration) HopTrend {
	w := time.Duration(float64(to-from) * trendWindow)
	start := Summarize(Match([]string{hop}, Between(traced, from, from+w), answers)[0], "")
	end := Summarize(Match([]string{hop}, Between(traced, to-w, to), answers)[0], "")
	return HopTrend{Hop: hop, Start: start.P50, End: end.P50, StartWrites: start.Writes, EndWrites: end.Writes,
		Unseen: start.Unreached + end.Unreached, Slack: max(MinLagSlack, time.Duration(MaxLagGrowth*float64(to-from-w)))}
}

// Verdict decides whether a step was sustained: at least one write and every
// write answered 2xx, at least MinAchieved of the rate achieved, and for the
// chain no hop's lag grew (HopTrend.Grew). why says what failed first.
func Verdict(s WriteStep) (ok bool, why string) {
	w := s.Writes
	switch {
	case w.OK == 0:
		return false, "no write answered 2xx"
	case w.Non2xx() > 0:
		return false, fmt.Sprintf("%d of %d writes not 2xx (%s)", w.Non2xx(), w.Requests, statusList(w))
	case w.GoodRPS() < MinAchieved*s.Rate:
		return false, fmt.Sprintf("achieved %.0f/s, under %.0f%% of %g/s", w.GoodRPS(), MinAchieved*100, s.Rate)
	case s.Config != ConfigChain:
		return true, ""
	case len(s.Trends) == 0:
		return false, "no runtime lag measured"
	}
	for _, t := range s.Trends {
		switch {
		case t.Unseen > 0:
			return false, fmt.Sprintf("%s: %d traced writes at the start or end not seen", t.Hop, t.Unseen)
		case t.StartWrites == 0 || t.EndWrites == 0:
			return false, fmt.Sprintf("%s: no traced write at the start or end", t.Hop)
		case t.Grew():
			return false, fmt.Sprintf("%s: lag grew from %s to %s ms (slack %s ms)", t.Hop, fmtMS(t.Start), fmtMS(t.End), fmtMS(t.Slack))
		}
	}
	return true, ""
}

// SustainedRange is what a configuration's steps say of its sustained rate:
// the highest rate at which every step was sustained (0: none), and the
// lowest rate above it at which one was not (0: none failed above it).
func SustainedRange(steps []WriteStep) (lo, hi float64) {
	failed := map[float64]bool{}
	for _, s := range steps {
		failed[s.Rate] = failed[s.Rate] || !s.Sustained
	}
	for rate, f := range failed {
		if !f {
			lo = max(lo, rate)
		}
	}
	for rate, f := range failed {
		if f && rate > lo && (hi == 0 || rate < hi) {
			hi = rate
		}
	}
	return lo, hi
}

// NextRampRate is the next rate to try for a configuration, or 0 when its
// sustained rate is known well enough: half the lowest rate when none was
// sustained, 1.5x the highest when none failed above it, else the middle of
// the bracket until it is narrower than rampPrecision. Rates are whole orders
// per second; one already tried ends the ramp.
func NextRampRate(steps []WriteStep) float64 {
	lo, hi := SustainedRange(steps)
	var next float64
	switch {
	case lo == 0 && hi <= 10, hi > 0 && lo > 0 && (hi-lo)/lo <= rampPrecision:
		return 0
	case lo == 0:
		next = math.Round(hi / 2)
	case hi == 0:
		next = math.Round(lo * 1.5)
	default:
		next = math.Round((lo + hi) / 2)
	}
	if slices.ContainsFunc(steps, func(s WriteStep) bool { return s.Rate == next }) {
		return 0
	}
	return next
}

// StepsOf returns the steps of configuration cfg, in the order run.
func (r *WritesReport) StepsOf(cfg string) []WriteStep {
	var out []WriteStep
	for _, s := range r.Steps {
		if s.Config == cfg {
			out = append(out, s)
		}
	}
	return out
}

// Pooled is a configuration's steps at one rate taken together: CPU per
// order over all their orders, and the lags of all their traced writes.
type Pooled struct {
	Steps int
	CPU   []ProcessCPU
	Hops  []Freshness
}

// PoolAt pools the steps of steps at rate.
func PoolAt(steps []WriteStep, rate float64) Pooled {
	var p Pooled
	t := CPUTime{Seconds: map[string]float64{}, Why: map[string]string{}}
	var orders int64
	var procs []string
	lags := map[string]*HopLags{}
	for _, s := range steps {
		if s.Rate != rate {
			continue
		}
		p.Steps++
		orders += s.Writes.OK
		for _, c := range s.CPU.Processes {
			if !slices.Contains(procs, c.Process) {
				procs = append(procs, c.Process)
			}
			if c.Why != "" && c.Why != "no operations" {
				t.Why[c.Process] = c.Why
			}
			t.Seconds[c.Process] += c.Seconds
		}
		for _, h := range s.Lags {
			if lags[h.Hop] == nil {
				lags[h.Hop] = &HopLags{Hop: h.Hop}
			}
			all := lags[h.Hop]
			all.Lags, all.NotSeen = append(all.Lags, h.Lags...), append(all.NotSeen, h.NotSeen...)
			all.Violations, all.Queued = append(all.Violations, h.Violations...), all.Queued+h.Queued
		}
	}
	p.CPU = PerOp(t, orders, procs)
	for _, hop := range watermarkHops {
		if h := lags[hop]; h != nil {
			p.Hops = append(p.Hops, Summarize(*h, ""))
		}
	}
	return p
}
