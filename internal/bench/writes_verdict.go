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
	// goalShare of the command side's sustained rate is where the chain's
	// goals are measured when the command side cannot take GoalRate.
	goalShare = 0.8
)

// WritesReport is a whole write benchmark run.
type WritesReport struct {
	Started  time.Time      `json:"started"`
	Command  string         `json:"command"`
	Settings WritesSettings `json:"settings"`
	Machine  Machine        `json:"machine"`
	Steps    []WriteStep    `json:"steps"`
	Notes    []string       `json:"notes,omitempty"`
}

// WritesSettings are the knobs a run's numbers depend on.
type WritesSettings struct {
	BaseURL          string        `json:"base_url"`
	Rates            []float64     `json:"rates"`
	Step             time.Duration `json:"step_ns"`
	Refine           int           `json:"refine"`
	Settle           time.Duration `json:"settle_ns"`
	MaxInFlight      int           `json:"max_in_flight"`
	TraceRate        float64       `json:"trace_rate"`
	TraceConcurrency int           `json:"trace_concurrency"`
	CommandSide      string        `json:"command_side"` // how the runtimes were switched off
}

// WriteStep is one configuration at one rate.
type WriteStep struct {
	Config   string        `json:"config"` // ConfigCommand, ConfigChain
	Rate     float64       `json:"rate"`   // asked, orders per second
	Phase    string        `json:"phase"`  // StepList, StepRamp, StepGoal
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
	// CPU per 2xx write of each process.
	CPU StepCPU `json:"cpu"`
	// Memory is each process's RSS when the writes stopped (the runtimes of
	// the command side: once they caught up).
	Memory []Memory `json:"memory,omitempty"`
	// CatchUp is how long each runtime took to cover the last write: after the
	// writes stopped (chain), after being switched on again (command side).
	CatchUp   []CatchUp `json:"catch_up,omitempty"`
	Sustained bool      `json:"sustained"`
	Why       string    `json:"why,omitempty"` // why not
}

// StepCPU is each process's CPU per order over Wall: the step for the command
// side; for the chain, the step and the catch-up after it.
type StepCPU struct {
	Wall      time.Duration `json:"wall_ns"`
	Processes []ProcessCPU  `json:"processes"`
}

// CatchUp is one runtime's catch-up; OK false when it did not get there, Why
// the last answer.
type CatchUp struct {
	Hop  string        `json:"hop"`
	Time time.Duration `json:"time_ns"`
	OK   bool          `json:"ok"`
	Why  string        `json:"why,omitempty"`
}

// HopTrend is one hop's lag at the start and at the end of a step: the median
// write-to-visible of the traced writes acknowledged in the first and the last
// fifth of it, and how many of those the hop did not show (read failed: the lag
// passed the runtime's wait bound, about 10 s).
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
	t := HopTrend{Hop: hop, Slack: max(MinLagSlack, time.Duration(MaxLagGrowth*float64(to-from-w)))}
	start := Summarize(Match([]string{hop}, Between(traced, from, from+w), answers)[0], "")
	end := Summarize(Match([]string{hop}, Between(traced, to-w, to), answers)[0], "")
	t.Start, t.StartWrites = start.P50, start.Writes
	t.End, t.EndWrites = end.P50, end.Writes
	t.Unseen = start.Unreached + end.Unreached
	return t
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
	}
	if s.Config != ConfigChain {
		return true, ""
	}
	if len(s.Trends) == 0 {
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
// the highest rate sustained (0: none), and the lowest rate above it that was
// not (0: none failed above it).
func SustainedRange(steps []WriteStep) (lo, hi float64) {
	for _, s := range steps {
		if s.Sustained {
			lo = max(lo, s.Rate)
		}
	}
	for _, s := range steps {
		if !s.Sustained && s.Rate > lo && (hi == 0 || s.Rate < hi) {
			hi = s.Rate
		}
	}
	return lo, hi
}

// NextRampRate is the next rate to try for a configuration, or 0 when its
// sustained rate is known well enough: half the lowest rate when none was
// sustained, 1.5x the highest when none failed above it, else the middle of the
// bracket until it is narrower than rampPrecision. Rates are whole orders per
// second; one already tried ends the ramp.
func NextRampRate(steps []WriteStep) float64 {
	if len(steps) == 0 {
		return 0
	}
	lo, hi := SustainedRange(steps)
	var next float64
	switch {
	case lo == 0 && hi <= 10:
		return 0
	case lo == 0:
		next = math.Round(hi / 2)
	case hi == 0:
		next = math.Round(lo * 1.5)
	case (hi-lo)/lo <= rampPrecision:
		return 0
	default:
		next = math.Round((lo + hi) / 2)
	}
	if findStep(steps, next) != nil {
		return 0
	}
	return next
}

// GoalRateOf is the rate the goals are checked at, from the command side's
// steps: GoalRate when the command side sustained it, else goalShare of its
// sustained rate (whole orders per second); why says which. 0 when the command
// side sustained nothing, or every rate tried and none as high as GoalRate: its
// sustained rate is then unknown.
func GoalRateOf(command []WriteStep) (rate float64, why string) {
	lo, hi := SustainedRange(command)
	switch {
	case lo == 0:
		return 0, "the command side sustained no rate"
	case lo >= GoalRate:
		return GoalRate, fmt.Sprintf("at %g orders/s", GoalRate)
	case hi == 0:
		return 0, fmt.Sprintf("the command side's sustained rate is unknown: it sustained every rate tried, up to %g/s", lo)
	}
	r := math.Round(goalShare * lo)
	return r, fmt.Sprintf("at %g orders/s, %.0f%% of the command side's sustained %g/s (it did not sustain %g/s)", r, goalShare*100, lo, GoalRate)
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

// Rates returns every rate run, ascending, once each.
func (r *WritesReport) Rates() []float64 {
	var out []float64
	for _, s := range r.Steps {
		if !slices.Contains(out, s.Rate) {
			out = append(out, s.Rate)
		}
	}
	slices.Sort(out)
	return out
}

// findStep returns the last step at rate, or nil.
func findStep(steps []WriteStep, rate float64) *WriteStep {
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].Rate == rate {
			return &steps[i]
		}
	}
	return nil
}

// cpuSum adds the CPU per order of processes; ok false when one is unknown.
func cpuSum(s WriteStep, processes []string) (float64, bool) {
	sum := 0.0
	for _, p := range processes {
		c := cpuOf(s.CPU.Processes, p)
		if c == nil || c.Why != "" {
			return 0, false
		}
		sum += c.PerOp
	}
	return sum, true
}

// stackProcesses are the processes of the system under test, the load
// generator not among them.
var stackProcesses = []string{ProcAPI, ProcPostgres, ProcAccelerated, ProcMaterialized}

// WritesGoals checks issue 19's goals against the run.
func WritesGoals(r *WritesReport) []Goal {
	cmdLo, cmdHi := SustainedRange(r.StepsOf(ConfigCommand))
	chainLo, chainHi := SustainedRange(r.StepsOf(ConfigChain))
	ratio := Goal{Goal: "whole chain sustains >= 90% of the command side's rate", Status: NA, Got: "not measured"}
	if cmdLo > 0 {
		v := chainLo / cmdLo
		ratio.Got = fmt.Sprintf("%.2f (chain %s, command side %s)", v, rangeText(chainLo, chainHi), rangeText(cmdLo, cmdHi))
		ratio.Status = status(v >= 0.9)
		if cmdHi == 0 {
			ratio.Got += "; the command side never failed, so the ratio is at most this"
		}
	}
	goals := []Goal{ratio}
	rate, why := GoalRateOf(r.StepsOf(ConfigCommand))
	var st *WriteStep
	if rate > 0 {
		st = findStep(r.StepsOf(ConfigChain), rate)
	}
	at := func(g string) string { return g + " (" + orDefault(why, "n/a") + ")" }
	for _, p := range []string{ProcAccelerated, ProcMaterialized} {
		g := Goal{Goal: at(p + " CPU per change <= Postgres's"), Status: NA, Got: "not measured"}
		if st != nil {
			c, pg := cpuOf(st.CPU.Processes, p), cpuOf(st.CPU.Processes, ProcPostgres)
			if c != nil && pg != nil && c.Why == "" && pg.Why == "" && pg.PerOp > 0 {
				g.Got = fmt.Sprintf("%.0f us vs %.0f us (%.2fx)", c.PerOp, pg.PerOp, c.PerOp/pg.PerOp)
				g.Status = status(c.PerOp <= pg.PerOp)
			}
		}
		goals = append(goals, g)
	}
	sum := Goal{Goal: at("CPU per order, all four processes, <= 1 ms"), Status: NA, Got: "not measured"}
	if st != nil {
		if v, ok := cpuSum(*st, stackProcesses); ok {
			sum.Got, sum.Status = fmt.Sprintf("%.0f us", v), status(v <= 1000)
		}
	}
	goals = append(goals, sum)
	for _, h := range []struct {
		hop, name string
		limit     time.Duration
	}{
		{HopWatermarkAccelerated, "write-to-visible p99 <= 50 ms at runtime 1", 50 * time.Millisecond},
		{HopWatermarkMaterialized, "write-to-visible p99 <= 100 ms end to end (runtime 2)", 100 * time.Millisecond},
	} {
		g := Goal{Goal: at(h.name), Status: NA, Got: "not measured"}
		if st != nil {
			if f := findFreshness(st.Hops, h.hop, ""); f != nil && f.Writes > 0 {
				g.Got = fmt.Sprintf("p99 %s ms of %d traced writes", lagText(*f, f.P99), f.Writes)
				if f.Unreached > 0 {
					g.Got += fmt.Sprintf(", %d not seen", f.Unreached)
				}
				g.Status = status(f.Reached > 0 && f.Unreached == 0 && f.P99 <= h.limit)
			}
		}
		goals = append(goals, g)
	}
	return goals
}

// rangeText is a sustained range: "1000/s (not 2000/s)", ">= 2000/s", "none".
func rangeText(lo, hi float64) string {
	switch {
	case lo == 0 && hi == 0:
		return "none measured"
	case lo == 0:
		return fmt.Sprintf("none (not even %g/s)", hi)
	case hi == 0:
		return fmt.Sprintf(">= %g/s (none failed)", lo)
	}
	return fmt.Sprintf("%g/s (not %g/s)", lo, hi)
}
