package bench

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// writesProcesses are the columns of the CPU and memory tables.
var writesProcesses = []string{ProcAPI, ProcPostgres, ProcAccelerated, ProcMaterialized, ProcBench}

// chartWidth is the longest bar of the text chart, in characters.
const chartWidth = 40

// WritesMarkdown renders the write benchmark's report: sustained rates and the
// goals first, then per rate and configuration the writes, freshness per hop,
// catch-up, CPU and memory per process, and a chart.
func WritesMarkdown(r *WritesReport) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Write benchmark: the rate each configuration sustains\n\n")
	p("Run of %s against %s", r.Started.UTC().Format("2006-01-02 15:04:05 UTC"), r.Settings.BaseURL)
	if r.Command != "" {
		p(":\n\n```sh\n%s\n```\n\n", r.Command)
	} else {
		p(".\n\n")
	}
	if r.Settings.Step < DefaultWriteStep {
		p("> Steps of %s, shorter than the %s the issue states: a smoke run, too short for numbers to quote.\n\n", r.Settings.Step, DefaultWriteStep)
	}
	writeMachine(&b, r.Machine)
	writeWritesSettings(&b, r.Settings)
	writeSustained(&b, r)
	p("## Goals of the write path\n\n| Goal | Measured | |\n|---|---|---|\n")
	for _, g := range WritesGoals(r) {
		p("| %s | %s | **%s** |\n", g.Goal, g.Got, g.Status)
	}
	p("\nThe sum is of the api, Postgres and both runtimes; the load generator's own CPU is in its column of the CPU table, not in the sum.\n\n")
	writeStepTable(&b, r)
	writeStepCPU(&b, r)
	writeStepMemory(&b, r)
	p("## Chart\n\n```text\n%s```\n\n", WritesChart(r))
	if len(r.Notes) > 0 {
		p("## Notes\n\n")
		for _, n := range r.Notes {
			p("- %s\n", n)
		}
	}
	return b.String()
}

func writeWritesSettings(b *strings.Builder, s WritesSettings) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Settings\n\n")
	p("- Open-loop writes (POST /orders through the api, a random order each) at %s orders/s, %s per step, at most %d in flight; latency from each write's due time, so a queue is charged to the server. Per rate, the command side then the whole chain; then the ramp (up to %d more steps per configuration) narrows each one's sustained rate; %s before each step.\n",
		rateList(s.Rates), s.Step, s.MaxInFlight, max(s.Refine, 0), s.Settle)
	p("- Command side: the api and Postgres, %s. Whole chain: everything running.\n", s.CommandSide)
	p("- Write-to-visible per hop, from the runtimes' watermarks: about %g writes/s are traced (every n-th), each read once per runtime with `SELECT 1 FROM <table> WHERE false` and `Spice-Min-Position: <its commit LSN>` (runtime 1: `orders`, runtime 2: `rankings`), at most %d reads in flight per runtime; the lag is the answer's arrival minus the write's acknowledgement.\n",
		s.TraceRate, s.TraceConcurrency)
	p("- Sustained: every write answered 2xx, at least %.0f%% of the rate achieved in 2xx per second of the step, and for the whole chain, on each runtime, the median lag of the traced writes of the last fifth of the step at most that of the first fifth plus a slack of %.0f%% of the time between the two (at least %s ms; a lag growing by g per second means the runtime applies about 1/(1+g) of the rate), and every traced write of those windows seen.\n",
		MinAchieved*100, MaxLagGrowth*100, fmtMS(MinLagSlack))
	p("- Catch-up: for the whole chain, from the end of the writes until each runtime's watermark covers the last write; for the command side, from switching the runtimes on again until they cover it (the backlog of the step).\n")
	p("- CPU per order: each process's CPU counter (the api's and the runtimes' `process_cpu_seconds_total`, Postgres's container cgroup, the load generator's getrusage) before and after, over the 2xx writes. The command side: the step. The whole chain: the step and its catch-up, so the work of every order of the step counts even when the runtimes lag. RSS: when the writes stop (the command side's runtimes: once they caught up).\n\n")
}

func writeSustained(b *strings.Builder, r *WritesReport) {
	fmt.Fprintf(b, "## Sustained rate\n\n| Configuration | Sustained | Steps | First failure above |\n|---|---|---:|---|\n")
	for _, cfg := range []string{ConfigCommand, ConfigChain} {
		steps := r.StepsOf(cfg)
		lo, hi := SustainedRange(steps)
		why := "-"
		if st := findStep(steps, hi); hi > 0 && st != nil {
			why = fmt.Sprintf("%g/s: %s", hi, st.Why)
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s |\n", cfg, rangeText(lo, hi), len(steps), why)
	}
	cmd, _ := SustainedRange(r.StepsOf(ConfigCommand))
	chain, _ := SustainedRange(r.StepsOf(ConfigChain))
	if cmd > 0 {
		fmt.Fprintf(b, "\nWhole chain / command side: **%.2f** (goal >= 0.9).\n\n", chain/cmd)
	} else {
		b.WriteString("\nWhole chain / command side: n/a (the command side sustained no rate).\n\n")
	}
}

// sortedSteps are the steps by rate, the command side first at each rate.
func sortedSteps(r *WritesReport) []WriteStep {
	steps := slices.Clone(r.Steps)
	slices.SortStableFunc(steps, func(a, b WriteStep) int {
		return cmp.Or(cmp.Compare(a.Rate, b.Rate), cmp.Compare(a.Config, b.Config))
	})
	return steps
}

func writeStepTable(b *strings.Builder, r *WritesReport) {
	b.WriteString("## Per rate\n\n")
	b.WriteString("| Rate (/s) | Configuration | Step | Achieved (/s) | Writes | POST p50 / p99 (ms) | runtime 1 p50 / p99 / max (ms) | runtime 2 p50 / p99 / max (ms) | runtime 1 lag start → end (ms) | runtime 2 lag start → end (ms) | catch-up runtime 1 / runtime 2 (s) | Sustained |\n")
	b.WriteString("|---:|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, s := range sortedSteps(r) {
		w := s.Writes
		fmt.Fprintf(b, "| %g | %s | %s | %.1f | %d, %s | %s / %s | %s | %s | %s | %s | %s | %s |\n",
			s.Rate, s.Config, s.Phase, w.GoodRPS(), w.Requests, statusList(w), fmtMS(w.P50), fmtMS(w.P99),
			hopText(s, HopWatermarkAccelerated), hopText(s, HopWatermarkMaterialized),
			trendText(s, HopWatermarkAccelerated), trendText(s, HopWatermarkMaterialized), catchUpText(s), verdictText(s))
	}
	b.WriteString("\n")
	seen := map[string]bool{}
	for _, s := range r.Steps {
		for _, f := range s.Failures {
			if f.Example != "" && !seen[f.Why] {
				seen[f.Why] = true
				fmt.Fprintf(b, "- writes answered %s, first at %g/s (%s): %q\n", f.Why, s.Rate, s.Config, f.Example)
			}
		}
	}
	if len(seen) > 0 {
		b.WriteString("\n")
	}
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

func catchUpText(s WriteStep) string {
	if len(s.CatchUp) == 0 {
		return "-"
	}
	parts := make([]string, len(s.CatchUp))
	for i, c := range s.CatchUp {
		parts[i] = fmt.Sprintf("%.2f", c.Time.Seconds())
		if !c.OK {
			parts[i] = fmt.Sprintf("> %.0f (%s)", c.Time.Seconds(), c.Why)
		}
	}
	return strings.Join(parts, " / ")
}

func verdictText(s WriteStep) string {
	if s.Sustained {
		return "yes"
	}
	return "no: " + s.Why
}

func writeStepCPU(b *strings.Builder, r *WritesReport) {
	b.WriteString("## CPU per order (microseconds)\n\n| Rate (/s) | Configuration | ")
	b.WriteString(strings.Join(writesProcesses, " | "))
	b.WriteString(" | sum (api, Postgres, runtimes) | over (s) |\n|---:|---|" + strings.Repeat("---:|", len(writesProcesses)+2) + "\n")
	for _, s := range sortedSteps(r) {
		fmt.Fprintf(b, "| %g | %s |", s.Rate, s.Config)
		for _, p := range writesProcesses {
			fmt.Fprintf(b, " %s |", stepCPUText(s, p))
		}
		procs := stackProcesses
		if s.Config == ConfigCommand {
			procs = []string{ProcAPI, ProcPostgres}
		}
		if v, ok := cpuSum(s, procs); ok {
			fmt.Fprintf(b, " %.0f |", v)
		} else {
			b.WriteString(" n/a |")
		}
		fmt.Fprintf(b, " %.1f |\n", s.CPU.Wall.Seconds())
	}
	b.WriteString("\n")
}

func stepCPUText(s WriteStep, process string) string {
	if s.Config == ConfigCommand && isRuntime(process) {
		return "off"
	}
	return cpuText(cpuOf(s.CPU.Processes, process))
}

func writeStepMemory(b *strings.Builder, r *WritesReport) {
	b.WriteString("## Resident memory\n\n| Rate (/s) | Configuration | ")
	b.WriteString(strings.Join(writesProcesses, " | "))
	b.WriteString(" |\n|---:|---|" + strings.Repeat("---:|", len(writesProcesses)) + "\n")
	for _, s := range sortedSteps(r) {
		fmt.Fprintf(b, "| %g | %s |", s.Rate, s.Config)
		for _, p := range writesProcesses {
			fmt.Fprintf(b, " %s |", memText(memoryOf(s.Memory, p)))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	var why []string
	for _, s := range r.Steps {
		for _, m := range s.Memory {
			if m.Bytes <= 0 && !slices.Contains(why, m.Runtime+": "+m.Source) {
				why = append(why, m.Runtime+": "+m.Source)
			}
		}
	}
	for _, w := range why {
		fmt.Fprintf(b, "- memory not read, %s\n", w)
	}
	if len(why) > 0 {
		b.WriteString("\n")
	}
}

// WritesChart draws, per rate, each configuration's achieved rate as a bar
// against the asked one, and the whole chain's p99 end to end.
func WritesChart(r *WritesReport) string {
	var b strings.Builder
	top := 0.0
	for _, s := range r.Steps {
		top = max(top, s.Rate, s.Writes.GoodRPS())
	}
	fmt.Fprintf(&b, "achieved orders/s ('|' marks the rate asked; * = sustained)\n")
	for _, s := range sortedSteps(r) {
		n := barLen(s.Writes.GoodRPS(), top)
		bar := []rune(strings.Repeat("█", n) + strings.Repeat(" ", chartWidth-n))
		if m := barLen(s.Rate, top); m > 0 {
			bar[m-1] = '|'
		}
		mark := " "
		if s.Sustained {
			mark = "*"
		}
		fmt.Fprintf(&b, "%6g %-12s %s %s %.0f\n", s.Rate, s.Config, string(bar), mark, s.Writes.GoodRPS())
	}
	var p99 []WriteStep
	topLag := time.Duration(0)
	for _, s := range sortedSteps(r) {
		if f := findFreshness(s.Hops, HopWatermarkMaterialized, ""); f != nil && f.Reached > 0 {
			p99 = append(p99, s)
			topLag = max(topLag, f.P99)
		}
	}
	if len(p99) > 0 {
		fmt.Fprintf(&b, "\nwhole chain, write-to-visible p99 at runtime 2 (ms)\n")
		for _, s := range p99 {
			f := findFreshness(s.Hops, HopWatermarkMaterialized, "")
			fmt.Fprintf(&b, "%6g %s %s\n", s.Rate, strings.Repeat("█", max(barLen(ms(f.P99), ms(topLag)), 1)), fmtMS(f.P99))
		}
	}
	return b.String()
}

func barLen(v, top float64) int {
	if top <= 0 || v <= 0 {
		return 0
	}
	return min(max(int(v/top*chartWidth+0.5), 1), chartWidth)
}

// WritesSVG draws the chart as SVG, as the other reports do.
func WritesSVG(r *WritesReport) string {
	var body strings.Builder
	var achieved, cpu, lag []svgBar
	colors := map[string]string{ConfigCommand: "#d62728", ConfigChain: "#2ca02c"}
	for _, s := range sortedSteps(r) {
		label := fmt.Sprintf("%g/s · %s", s.Rate, s.Config)
		achieved = append(achieved, svgBar{label, s.Writes.GoodRPS(), fmt.Sprintf("%.0f/s", s.Writes.GoodRPS()), colors[s.Config]})
		procs := stackProcesses
		if s.Config == ConfigCommand {
			procs = []string{ProcAPI, ProcPostgres}
		}
		if v, ok := cpuSum(s, procs); ok {
			cpu = append(cpu, svgBar{label, v, fmt.Sprintf("%.0f us", v), colors[s.Config]})
		}
		if f := findFreshness(s.Hops, HopWatermarkMaterialized, ""); f != nil && f.Reached > 0 {
			lag = append(lag, svgBar{label + " p99", ms(f.P99), fmtMS(f.P99) + " ms", hopColors[HopMaterialized]})
		}
	}
	y := barChart(&body, 40, "Achieved orders/s per asked rate (higher is better)", achieved)
	y = barChart(&body, y, "CPU per order, sum of the stack's processes (lower is better)", cpu)
	y = barChart(&body, y, "Write-to-visible p99 at runtime 2, whole chain (lower is better)", lag)
	return svgDocument(fmt.Sprintf("CQRS write benchmark, %s, %d cores", r.Started.UTC().Format("2006-01-02"), r.Machine.Cores), y, body.String())
}

// StepLine is a step's progress line.
func StepLine(s WriteStep) string {
	w := s.Writes
	line := fmt.Sprintf("  achieved %.1f/s, %d writes (%s), POST p50 %s p99 %s ms", w.GoodRPS(), w.Requests, statusList(w), fmtMS(w.P50), fmtMS(w.P99))
	for _, h := range []string{HopWatermarkAccelerated, HopWatermarkMaterialized} {
		if f := findFreshness(s.Hops, h, ""); f != nil {
			line += fmt.Sprintf("; %s p50/p99/max %s ms, lag %s", h, hopText(s, h), trendText(s, h))
		}
	}
	line += "; catch-up " + catchUpText(s) + " s; CPU/order:"
	for _, p := range writesProcesses {
		if s.Config == ConfigCommand && isRuntime(p) {
			continue
		}
		line += fmt.Sprintf(" %s %s", p, cpuText(cpuOf(s.CPU.Processes, p)))
	}
	return line + "; sustained: " + verdictText(s)
}
