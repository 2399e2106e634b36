package bench

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The write path's goals, as they are stated: at 100 orders/s (the quiet
// rate) and at 1,000 orders/s.
const (
	quietRate = 100.0
	goalRate  = 1000.0
	// CeilingGoal is the single-feed ceiling's goal at runtime 1, changes/s.
	CeilingGoal = 50_000.0
)

// WritesGoals checks the write path's goals against the run and lists the
// figures that have no goal of their own (F, runtime 2's ceiling), each with
// what was measured: every figure, including those that miss.
func WritesGoals(r *WritesReport) []Goal {
	cmdLo, cmdHi := SustainedRange(r.StepsOf(ConfigCommand))
	chainLo, chainHi := SustainedRange(r.StepsOf(ConfigChain))
	ratio := notMeasured("whole chain's sustained rate >= 90% of the command side's")
	if cmdLo > 0 {
		v := chainLo / cmdLo
		ratio.Got = fmt.Sprintf("%.2f (whole chain %s, command side %s)", v, rangeText(chainLo, chainHi), rangeText(cmdLo, cmdHi))
		ratio.Status = status(v >= 0.9)
		if cmdHi == 0 {
			ratio.Got += "; the command side never failed, so the ratio is at most this"
		}
	}
	chain := r.StepsOf(ConfigChain)
	quiet, busy := PoolAt(chain, quietRate), PoolAt(chain, goalRate)
	goals := []Goal{ratio, cpuGoal(busy, ProcAccelerated, 100), cpuGoal(busy, ProcMaterialized, 50),
		lagGoalAt(quiet, quietRate, HopWatermarkAccelerated, "p50", 5*time.Millisecond),
		lagGoalAt(quiet, quietRate, HopWatermarkMaterialized, "p50", 10*time.Millisecond),
		lagGoalAt(busy, goalRate, HopWatermarkAccelerated, "p99", 50*time.Millisecond),
		lagGoalAt(busy, goalRate, HopWatermarkMaterialized, "p99", 100*time.Millisecond),
	}
	goals = append(goals, ceilingGoals(r.Ceiling)...)
	goals = append(goals, rssGoal(r.Overload))
	for _, p := range []string{ProcAccelerated, ProcMaterialized} {
		g := Goal{"F, CPU of applying a lone change, " + p, "not measured", Figure}
		if c := cpuOf(loneCPU(r.Lone), p); c != nil && c.HasNet {
			g.Got = fmt.Sprintf("%.0f us (%.0f us gross, %d lone changes)", c.NetPerOp, c.PerOp, r.Lone.Orders)
		}
		goals = append(goals, g)
	}
	return goals
}

func loneCPU(l *LoneCost) []ProcessCPU {
	if l == nil {
		return nil
	}
	return l.CPU
}

func cpuGoal(p Pooled, process string, limit float64) Goal {
	g := notMeasured(fmt.Sprintf("CPU per change at %g orders/s, %s <= %g us", goalRate, process, limit))
	if c := cpuOf(p.CPU, process); c != nil && c.Why == "" {
		g.Got, g.Status = fmt.Sprintf("%.0f us (%d steps)", c.PerOp, p.Steps), status(c.PerOp <= limit)
	} else if c != nil {
		g.Got = c.Why
	}
	return g
}

func lagGoalAt(p Pooled, rate float64, hop, pct string, limit time.Duration) Goal {
	name := strings.TrimSpace(strings.SplitN(hop, " watermark", 2)[0])
	g := notMeasured(fmt.Sprintf("write-to-visible %s at %g orders/s, %s <= %s ms", pct, rate, name, fmtMS(limit)))
	f := findFreshness(p.Hops, hop, "")
	if f == nil || f.Writes == 0 {
		return g
	}
	v := f.P99
	if pct == "p50" {
		v = f.P50
	}
	g.Got = fmt.Sprintf("%s ms of %d traced writes (%d steps)", lagText(*f, v), f.Writes, p.Steps)
	if f.Unreached > 0 {
		g.Got += fmt.Sprintf(", %d not seen", f.Unreached)
	}
	g.Status = status(f.Reached > 0 && f.Unreached == 0 && v <= limit)
	return g
}

func ceilingGoals(c *Ceiling) []Goal {
	goals := []Goal{notMeasured(fmt.Sprintf("single-feed ceiling, runtime 1 >= %s changes/s", count(int64(CeilingGoal)))),
		{"single-feed ceiling, runtime 2", "not measured", Figure}}
	if c == nil {
		return goals
	}
	for i, hop := range watermarkHops {
		rate := c.Rate(hop)
		goals[i].Got = fmt.Sprintf("%s changes/s (a backlog of %s)", count(int64(rate)), count(int64(c.Backlog)))
		if rate == 0 {
			goals[i].Got = "did not catch up: " + catchUpText(c.CatchUp)
		}
		if c.Why != "" {
			goals[i].Got += "; " + c.Why
		}
	}
	goals[0].Status = status(c.Rate(HopWatermarkAccelerated) >= CeilingGoal)
	return goals
}

func rssGoal(o *Overload) Goal {
	g := notMeasured("RSS of each runtime bounded under 2x overload")
	if o == nil || len(o.Runtimes) == 0 {
		return g
	}
	ok := true
	var parts []string
	for _, m := range o.Runtimes {
		ok = ok && m.Bounded
		parts = append(parts, fmt.Sprintf("%s peak %s in the first half, %s in the second", m.Process, bytesText(m.FirstHalf), bytesText(m.SecondHalf)))
	}
	g.Got, g.Status = fmt.Sprintf("%g orders/s for %s: %s", o.Rate, o.For, strings.Join(parts, "; ")), status(ok)
	return g
}

// WritesMarkdown renders the write benchmark's report: the goals and figures
// first, then the sustained rates, every step, CPU and memory per process,
// and the overload.
func WritesMarkdown(r *WritesReport) string {
	if r.Goals == nil {
		c := *r
		c.Goals = WritesGoals(r)
		r = &c
	}
	return render("writes-report", r)
}

// WritesSummary is the part of the report a docs page shows.
func WritesSummary(r *WritesReport) string { return render("writes-docs", r) }

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

// sustainedRow is a configuration's row of the sustained rates: its range,
// its steps, and why the first rate above it failed.
func sustainedRow(r *WritesReport, cfg string) string {
	steps := r.StepsOf(cfg)
	lo, hi := SustainedRange(steps)
	why := "-"
	if i := slices.IndexFunc(steps, func(s WriteStep) bool { return s.Rate == hi && !s.Sustained }); i >= 0 {
		why = fmt.Sprintf("%g/s: %s", hi, steps[i].Why)
	}
	return fmt.Sprintf("| %s | %s | %d | %s |", cfg, rangeText(lo, hi), len(steps), why)
}

// chainRatio is the whole chain's sustained rate over the command side's.
func chainRatio(r *WritesReport) string {
	cmdLo, _ := SustainedRange(r.StepsOf(ConfigCommand))
	chainLo, _ := SustainedRange(r.StepsOf(ConfigChain))
	return orNA(cmdLo > 0, fmt.Sprintf("**%.2f** (goal >= 0.9).", ratio(chainLo, cmdLo)))
}

// sortedSteps are the steps by rate, the command side first at each rate.
func sortedSteps(r *WritesReport) []WriteStep {
	return slices.SortedStableFunc(slices.Values(r.Steps), func(a, b WriteStep) int {
		return cmp.Or(cmp.Compare(a.Rate, b.Rate), cmp.Compare(a.Config, b.Config))
	})
}

// stepFailures are the first message of each status writes were answered.
func stepFailures(r *WritesReport) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range r.Steps {
		for _, f := range s.Failures {
			if f.Example != "" && !seen[f.Why] {
				seen[f.Why] = true
				out = append(out, fmt.Sprintf("writes answered %s, first at %g/s (%s): %q", f.Why, s.Rate, s.Config, f.Example))
			}
		}
	}
	return out
}

// offText is "off" for a runtime of a command side step.
func offText(s WriteStep, process string) string {
	if s.Config == ConfigCommand && isRuntime(process) {
		return "off"
	}
	return ""
}

// stepCPUSum is the gross CPU per order of the api, Postgres and the
// runtimes that ran.
func stepCPUSum(s WriteStep) string {
	procs := []string{ProcAPI, ProcPostgres, ProcAccelerated, ProcMaterialized}
	if s.Config == ConfigCommand {
		procs = procs[:2]
	}
	return cpuSum(s.CPU.Processes, procs)
}

func hopText(s WriteStep, hop string) string {
	f := findFreshness(s.Hops, hop, "")
	if f == nil {
		return "-"
	}
	t := fmt.Sprintf("%s / %s / %s", lagText(*f, f.P50), lagText(*f, f.P99), lagText(*f, f.Max))
	if f.Unreached > 0 {
		t += fmt.Sprintf(" (%d of %d not seen)", f.Unreached, f.Writes)
	}
	return t
}

func trendText(s WriteStep, hop string) string {
	i := slices.IndexFunc(s.Trends, func(t HopTrend) bool { return t.Hop == hop })
	if i < 0 {
		return "-"
	}
	t := s.Trends[i]
	txt := fmt.Sprintf("%s → %s", fmtMS(t.Start), fmtMS(t.End))
	if t.Unseen > 0 {
		txt += fmt.Sprintf(" (%d not seen)", t.Unseen)
	}
	return txt
}

func verdictText(s WriteStep) string {
	if s.Sustained {
		return "yes"
	}
	return "no: " + s.Why
}

// catchUpText is each hop's catch-up in seconds: "0.52 / 0.61".
func catchUpText(cs []CatchUp) string {
	if len(cs) == 0 {
		return "-"
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%.2f", c.Time.Seconds())
		if !c.OK {
			parts[i] = fmt.Sprintf("> %.0f (%s)", c.Time.Seconds(), c.Why)
		}
	}
	return strings.Join(parts, " / ")
}

func ceilingText(c *Ceiling) string {
	return fmt.Sprintf("backlog of %d written in %.1f s; caught up in %s s: runtime 1 %s/s, runtime 2 %s/s", c.Backlog, c.Wrote.Seconds(),
		catchUpText(c.CatchUp), count(int64(c.Rate(HopWatermarkAccelerated))), count(int64(c.Rate(HopWatermarkMaterialized))))
}
