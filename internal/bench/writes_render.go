package bench

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"
)

// writesProcesses are the columns of the CPU and memory tables.
var writesProcesses = []string{ProcAPI, ProcPostgres, ProcAccelerated, ProcMaterialized, ProcBench}

func init() {
	maps.Copy(funcs, template.FuncMap{
		"shortSteps": func(r *WritesReport) bool {
			return r.Settings.Step < DefaultWriteStep || r.Settings.Rounds < DefaultWriteRounds
		},
		"sustainedRows": sustainedRows, "stepRows": stepRows, "cpuRows": cpuRows, "memRows": memRows,
		"failures": stepFailures, "catchUp": catchUpText,
	})
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
func WritesSummary(r *WritesReport) string {
	m := r.Machine
	return fmt.Sprintf("Run of %s: %d cores (%s), Go %s, Docker %s; %s steps, %d rounds; the load generator, the api, Postgres and both runtimes share the cores.\n\n",
		utc(r.Started), m.Cores, m.CPU, m.GoVersion, m.Docker, r.Settings.Step, r.Settings.Rounds) + render("goals", r.Goals)
}

func sustainedRows(r *WritesReport) []string {
	var out []string
	for _, cfg := range []string{ConfigCommand, ConfigChain} {
		steps := r.StepsOf(cfg)
		lo, hi := SustainedRange(steps)
		why := "-"
		for _, s := range steps {
			if s.Rate == hi && !s.Sustained && why == "-" {
				why = fmt.Sprintf("%g/s: %s", hi, s.Why)
			}
		}
		out = append(out, row(cfg, rangeText(lo, hi), fmt.Sprint(len(steps)), why))
	}
	cmdLo, _ := SustainedRange(r.StepsOf(ConfigCommand))
	chainLo, _ := SustainedRange(r.StepsOf(ConfigChain))
	return append(out, "", "Whole chain / command side: "+orNA(cmdLo > 0, func() string { return fmt.Sprintf("**%.2f** (goal >= 0.9).", chainLo/cmdLo) }))
}

// sortedSteps are the steps by rate, the command side first at each rate.
func sortedSteps(r *WritesReport) []WriteStep {
	steps := slices.Clone(r.Steps)
	slices.SortStableFunc(steps, func(a, b WriteStep) int {
		return cmp.Or(cmp.Compare(a.Rate, b.Rate), cmp.Compare(a.Config, b.Config))
	})
	return steps
}

func stepRows(r *WritesReport) []string {
	var out []string
	for _, s := range sortedSteps(r) {
		w := s.Writes
		out = append(out, row(fmt.Sprint(s.Rate), s.Config, fmt.Sprintf("%s %d", s.Phase, s.Round), fmt.Sprintf("%.1f", w.GoodRPS()),
			fmt.Sprintf("%d, %s", w.Requests, statusList(w)), fmtMS(w.P50)+" / "+fmtMS(w.P99),
			hopText(s, HopWatermarkAccelerated), hopText(s, HopWatermarkMaterialized),
			trendText(s, HopWatermarkAccelerated), trendText(s, HopWatermarkMaterialized), catchUpText(s.CatchUp), verdictText(s)))
	}
	return out
}

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

func cpuRows(r *WritesReport) []string {
	out := []string{row(append(append([]string{"Rate (/s)", "Configuration"}, writesProcesses...), "sum (api, Postgres, runtimes)", "over (s)")...),
		"|---:|---|" + strings.Repeat("---:|", len(writesProcesses)+2)}
	for _, s := range sortedSteps(r) {
		cells := []string{fmt.Sprint(s.Rate), s.Config}
		sum, all := 0.0, true
		for _, p := range writesProcesses {
			c := cpuOf(s.CPU.Processes, p)
			if off := offText(s, p); off != "" {
				cells = append(cells, off)
				continue
			}
			cells = append(cells, cpuText(c))
			if p != ProcBench {
				all = all && c != nil && c.Why == ""
				if all {
					sum += c.PerOp
				}
			}
		}
		cells = append(cells, orNA(all, fmt.Sprintf("%.0f", sum)), fmt.Sprintf("%.1f", s.CPU.Wall.Seconds()))
		out = append(out, row(cells...))
	}
	return out
}

func memRows(r *WritesReport) []string {
	out := []string{row(append([]string{"Rate (/s)", "Configuration"}, writesProcesses...)...), "|---:|---|" + strings.Repeat("---:|", len(writesProcesses))}
	for _, s := range sortedSteps(r) {
		cells := []string{fmt.Sprint(s.Rate), s.Config}
		for _, p := range writesProcesses {
			cells = append(cells, cmp.Or(offText(s, p), memText(memoryOf(s.Memory, p))))
		}
		out = append(out, row(cells...))
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
	for _, t := range s.Trends {
		if t.Hop == hop {
			txt := fmt.Sprintf("%s → %s", fmtMS(t.Start), fmtMS(t.End))
			if t.Unseen > 0 {
				txt += fmt.Sprintf(" (%d not seen)", t.Unseen)
			}
			return txt
		}
	}
	return "-"
}

func verdictText(s WriteStep) string {
	if s.Sustained {
		return "yes"
	}
	return "no: " + s.Why
}

// StepLine is a step's progress line.
func StepLine(s WriteStep) string {
	w := s.Writes
	line := fmt.Sprintf("  achieved %.1f/s, %d writes (%s), POST p50 %s p99 %s ms", w.GoodRPS(), w.Requests, statusList(w), fmtMS(w.P50), fmtMS(w.P99))
	for _, h := range watermarkHops {
		if findFreshness(s.Hops, h, "") != nil {
			line += fmt.Sprintf("; %s p50/p99/max %s ms, lag %s", h, hopText(s, h), trendText(s, h))
		}
	}
	line += "; catch-up " + catchUpText(s.CatchUp) + " s; CPU/order:"
	for _, c := range s.CPU.Processes {
		line += fmt.Sprintf(" %s %s", c.Process, cpuText(&c))
	}
	return line + "; sustained: " + verdictText(s)
}
