package bench

import (
	"fmt"
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
	ratio := Goal{Goal: "whole chain's sustained rate >= 90% of the command side's", Status: NA, Got: "not measured"}
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
	goals := []Goal{ratio,
		cpuGoal(busy, ProcAccelerated, 100), cpuGoal(busy, ProcMaterialized, 50),
		writeLagGoal(quiet, quietRate, HopWatermarkAccelerated, "p50", 5*time.Millisecond),
		writeLagGoal(quiet, quietRate, HopWatermarkMaterialized, "p50", 10*time.Millisecond),
		writeLagGoal(busy, goalRate, HopWatermarkAccelerated, "p99", 50*time.Millisecond),
		writeLagGoal(busy, goalRate, HopWatermarkMaterialized, "p99", 100*time.Millisecond),
	}
	goals = append(goals, ceilingGoals(r.Ceiling)...)
	goals = append(goals, rssGoal(r.Overload))
	for _, p := range []string{ProcAccelerated, ProcMaterialized} {
		g := Goal{Goal: "F, CPU of applying a lone change, " + p, Status: "figure", Got: "not measured"}
		if c := cpuOfLone(r.Lone, p); c != nil {
			g.Got = fmt.Sprintf("%.0f us (%.0f us gross, %d lone changes)", c.NetPerOp, c.PerOp, r.Lone.Orders)
		}
		goals = append(goals, g)
	}
	return goals
}

func cpuOfLone(l *LoneCost, p string) *ProcessCPU {
	if l == nil {
		return nil
	}
	if c := cpuOf(l.CPU, p); c != nil && c.HasNet {
		return c
	}
	return nil
}

func cpuGoal(p Pooled, process string, limit float64) Goal {
	g := Goal{Goal: fmt.Sprintf("CPU per change at %g orders/s, %s <= %g us", goalRate, process, limit), Status: NA, Got: "not measured"}
	if c := cpuOf(p.CPU, process); c != nil && c.Why == "" {
		g.Got, g.Status = fmt.Sprintf("%.0f us (%d steps)", c.PerOp, p.Steps), status(c.PerOp <= limit)
	} else if c != nil {
		g.Got = c.Why
	}
	return g
}

func writeLagGoal(p Pooled, rate float64, hop, pct string, limit time.Duration) Goal {
	name := strings.TrimSuffix(strings.SplitN(hop, " watermark", 2)[0], " ")
	g := Goal{Goal: fmt.Sprintf("write-to-visible %s at %g orders/s, %s <= %s ms", pct, rate, name, fmtMS(limit)), Status: NA, Got: "not measured"}
	f := findFreshness(p.Hops, hop, "")
	if f == nil || f.Writes == 0 {
		return g
	}
	v := f.P50
	if pct == "p99" {
		v = f.P99
	}
	g.Got = fmt.Sprintf("%s ms of %d traced writes (%d steps)", lagText(*f, v), f.Writes, p.Steps)
	if f.Unreached > 0 {
		g.Got += fmt.Sprintf(", %d not seen", f.Unreached)
	}
	g.Status = status(f.Reached > 0 && f.Unreached == 0 && v <= limit)
	return g
}

func ceilingGoals(c *Ceiling) []Goal {
	g := Goal{Goal: fmt.Sprintf("single-feed ceiling, runtime 1 >= %s changes/s", count(int64(CeilingGoal))), Status: NA, Got: "not measured"}
	g2 := Goal{Goal: "single-feed ceiling, runtime 2", Status: "figure", Got: "not measured"}
	if c == nil {
		return []Goal{g, g2}
	}
	for _, x := range []*Goal{&g, &g2} {
		hop := HopWatermarkAccelerated
		if x == &g2 {
			hop = HopWatermarkMaterialized
		}
		rate := c.Rate(hop)
		x.Got = fmt.Sprintf("%s changes/s (a backlog of %s)", count(int64(rate)), count(int64(c.Backlog)))
		if rate == 0 {
			x.Got = "did not catch up: " + catchUpText(c.CatchUp)
		}
		if c.Why != "" {
			x.Got += "; " + c.Why
		}
	}
	g.Status = status(c.Rate(HopWatermarkAccelerated) >= CeilingGoal)
	return []Goal{g, g2}
}

func rssGoal(o *Overload) Goal {
	g := Goal{Goal: "RSS of each runtime bounded under 2x overload", Status: NA, Got: "not measured"}
	if o == nil || len(o.Runtimes) == 0 {
		return g
	}
	ok := true
	var parts []string
	for _, m := range o.Runtimes {
		ok = ok && m.Bounded
		parts = append(parts, fmt.Sprintf("%s peak %s in the first half, %s in the second", m.Process, bytesText(m.FirstHalf), bytesText(m.SecondHalf)))
	}
	g.Got = fmt.Sprintf("%g orders/s for %s: %s", o.Rate, o.For, strings.Join(parts, "; "))
	g.Status = status(ok)
	return g
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
