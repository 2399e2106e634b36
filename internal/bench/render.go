package bench

import (
	"cmp"
	"embed"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/docker/go-units"
)

//go:embed templates/*.tmpl
var templateFiles embed.FS

// funcs are the templates' helpers, so that every report formats numbers the
// same way; files that render a report add theirs in init.
var funcs = template.FuncMap{
	"ms": fmtMS, "pct": pct, "pctOrNA": pctOrNA, "ratio": ratioText, "bytes": bytesText, "rates": rateList,
	"statuses": statusList, "cacheList": cacheList, "lag": lagText, "hop": hopTitle, "notSeen": notSeenText,
	"cpu": cpuText, "size": sizeLabel, "count": count, "mem": memText, "utc": utc, "utcSeconds": utcSeconds, "seconds": seconds,
	"perSecond": func(s Summary) string { return bytesText(int64(ratio(float64(s.Bytes), s.Elapsed.Seconds()))) },
	"goals":     func(s SizeResult) []Goal { return Goals(s, 100) }, "oha": OhaCommands,
	"cpuTable": cpuTable, "readCPU": readCPUText, "reasons": reasonExamples,
	"scaleTable": scaleTable, "scaleFreshness": scaleFreshness,
	"join": strings.Join, "row": row,
}

// templates are the reports' Markdown, parsed on first use.
var templates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(funcs).ParseFS(templateFiles, "templates/*.tmpl"))
})

// render runs the named template; the templates are the program's own, so a
// failure is a bug and panics.
func render(name string, data any) string {
	var b strings.Builder
	if err := templates().ExecuteTemplate(&b, name, data); err != nil {
		panic(fmt.Sprintf("render %s: %v", name, err))
	}
	return b.String()
}

// Markdown renders a scale run's report: per size, a table shaped like the
// recipe's, the details oha prints, open-loop tables, CPU, freshness, memory
// and the goals; then the scale summary and the equivalent oha commands.
func Markdown(r *Report) string { return render("scale-report", r) }

// DocsSummary is the part of a scale run's report a docs page shows: when and
// where it ran, then the scale tables.
func DocsSummary(r *Report) string {
	m := r.Machine
	head := fmt.Sprintf("Run of %s: %d cores (%s), %s, Go %s, Docker %s; %d connections, %g writes/s.",
		utc(r.Started), m.Cores, m.CPU, bytesText(m.MemoryBytes), m.GoVersion, m.Docker, r.Settings.Concurrency, r.Settings.WriteRate)
	if r.Settings.Quick {
		head += " A quick run (--quick): too short for numbers to quote."
	}
	return head + "\n\n" + strings.ReplaceAll(render("scale-tables", r.Sizes), "## Scale: ", "### ")
}

// SizeText is a size's summary for the progress output.
func SizeText(s SizeResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n%-36s %8s %10s %9s %9s %9s %9s\n", sizeLabel(s.Orders), "scenario", "success", "req/s", "p50 ms", "p99 ms", "vs /rank", "of noop")
	for _, c := range s.Closed {
		m := c.Summary
		fmt.Fprintf(&b, "%-36s %8s %10.1f %9s %9s %9s %8s\n", c.Target.Name, pct(m.SuccessRate()), m.RPS(), fmtMS(m.P50), fmtMS(m.P99), ratioText(c.VsRanking), pctOrNA(c.OfCeiling))
	}
	for _, f := range append(slices.Clone(s.Watermarks), s.Freshness...) {
		fmt.Fprintf(&b, "freshness %-30s %-10s seen %d/%d p50 %s p99 %s ms\n", f.Hop, f.Phase, f.Reached, f.Writes, lagText(f, f.P50), lagText(f, f.P99))
		if f.Violations > 0 {
			fmt.Fprintf(&b, "READ-YOUR-WRITES VIOLATED on %s: %d answers below their Spice-Min-Position (first: %s)\n", f.Hop, f.Violations, f.Violation)
		}
	}
	return b.String()
}

func utc(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

func utcSeconds(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// row is a Markdown table row of cells.
func row(cells ...string) string { return "| " + strings.Join(cells, " | ") + " |" }

// hopTitles describe the hops in the freshness table.
var hopTitles = map[string]string{
	HopPostgres:            "Postgres (`/ranking`, baseline)",
	HopAccelerated:         "accelerated (`/ranking-accelerated`)",
	HopMaterialized:        "materialized (`/ranking-materialized`, end to end)",
	HopAcceleratedRuntime:  "accelerated runtime (HTTP `/v1/sql`, no api)",
	HopMaterializedRuntime: "materialized runtime (HTTP `/v1/sql`, no api)",
}

func hopTitle(hop string) string { return cmp.Or(hopTitles[hop], hop) }

// notSeenText is the Not seen cell: "0", or "3 (status 504×2, timeout×1)".
func notSeenText(f Freshness) string {
	n := max(f.Unreached-f.Violations, 0)
	if n == 0 || len(f.NotSeen) == 0 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d (%s)", n, reasonList(f.NotSeen))
}

// reasonExamples lists the first message of each reason a write was not seen.
func reasonExamples(fs []Freshness) []string {
	var out []string
	for _, f := range fs {
		for _, r := range f.NotSeen {
			if r.Example != "" {
				out = append(out, fmt.Sprintf("%s, %s, %s: %q", f.Hop, f.Phase, r.Why, r.Example))
			}
		}
	}
	return out
}

// cpuTable is the CPU per request table of a size: a column per process and
// the sum of the gross figures; nil without readings.
func cpuTable(s SizeResult) []string {
	var procs []string
	for _, r := range s.Closed {
		if len(r.CPU) > 0 && procs == nil {
			for _, c := range r.CPU {
				procs = append(procs, c.Process)
			}
		}
	}
	if procs == nil {
		return nil
	}
	out := []string{row(append(append([]string{"Scenario"}, procs...), "sum")...), "|---|" + strings.Repeat("---:|", len(procs)+1)}
	for _, r := range s.Closed {
		cells, sum, all := []string{r.Target.Name}, 0.0, true
		for _, p := range procs {
			c := cpuOf(r.CPU, p)
			cells = append(cells, cpuText(c))
			if all = all && c != nil && c.Why == ""; all {
				sum += c.PerOp
			}
		}
		out = append(out, row(append(cells, orNA(all, fmt.Sprintf("%.0f", sum)))...))
	}
	return out
}

func readCPUText(s SizeResult) string {
	mat := find(s.Closed, PathMaterialized, false)
	if mat == nil {
		return ""
	}
	v, net, hasNet, ok := ReadCPU(mat.CPU)
	if !ok {
		return ""
	}
	return fmt.Sprintf("CPU per materialized read (api + runtime 2, cache on): **%.0f us**%s (goal <= 80 us); /ranking-materialized at %s of /noop (goal >= 50%%).",
		v, netText(net, hasNet), pctOrNA(mat.OfCeiling))
}

// scaleTable is requests/sec and p99 by size, with the runtimes' memory.
func scaleTable(sizes []SizeResult) []string {
	scen := Scenarios()
	head := []string{"Orders"}
	for _, t := range scen {
		head = append(head, t.Name)
	}
	out := []string{row(append(head, "accelerated memory", "materialized memory")...), "|---:|" + strings.Repeat("---:|", len(scen)+2)}
	for _, s := range sizes {
		cells := []string{sizeLabel(s.Orders)}
		for _, t := range scen {
			r := find(s.Closed, t.Path, t.NoCache)
			cells = append(cells, orNA(r != nil, func() string { return fmt.Sprintf("%.1f (p99 %s ms)", r.Summary.RPS(), fmtMS(r.Summary.P99)) }))
		}
		for _, p := range []string{ProcAccelerated, ProcMaterialized} {
			cells = append(cells, memText(memoryOf(s.Memory, p)))
		}
		out = append(out, row(cells...))
	}
	return out
}

// scaleFreshness is, per size, freshness from the watermarks, CPU per change
// and the materialized read's cost.
func scaleFreshness(sizes []SizeResult) []string {
	out := []string{row("Orders", "seeded in (s)", "runtimes synced in (s)", "runtime 1 watermark p50 / p99 / max (ms)", "runtime 2 watermark p50 / p99 / max (ms)",
		"CPU per change, runtime 1 (us)", "CPU per change, runtime 2 (us)", "CPU per materialized read, api + runtime 2 (us, gross)", "materialized % of /noop"),
		"|---:|---:|---:|---:|---:|---:|---:|---:|---:|"}
	for _, s := range sizes {
		cells := []string{sizeLabel(s.Orders), fmt.Sprintf("%.1f", s.SeedTime.Seconds()), fmt.Sprintf("%.1f", s.SyncTime.Seconds())}
		for _, hop := range []string{HopWatermarkAccelerated, HopWatermarkMaterialized} {
			f := findFreshness(s.Watermarks, hop, PhaseIdle)
			cells = append(cells, orNA(f != nil && f.Reached > 0, func() string { return fmt.Sprintf("%s / %s / %s", fmtMS(f.P50), fmtMS(f.P99), fmtMS(f.Max)) }))
		}
		for _, p := range []string{ProcAccelerated, ProcMaterialized} {
			cells = append(cells, orNA(s.Changes != nil, func() string { return cpuText(cpuOf(s.Changes.CPU, p)) }))
		}
		mat := find(s.Closed, PathMaterialized, false)
		gross, ok := 0.0, false
		if mat != nil {
			gross, _, _, ok = ReadCPU(mat.CPU)
		}
		cells = append(cells, orNA(ok, fmt.Sprintf("%.0f", gross)), orNA(mat != nil, func() string { return pctOrNA(mat.OfCeiling) }))
		out = append(out, row(cells...))
	}
	return out
}

// orNA is text (a string, or a func giving one, called only when ok), or n/a.
func orNA(ok bool, text any) string {
	if !ok {
		return NA
	}
	if f, isFunc := text.(func() string); isFunc {
		return f()
	}
	return text.(string)
}

func memoryOf(ms []Memory, process string) Memory {
	for _, m := range ms {
		if m.Process == process {
			return m
		}
	}
	return Memory{Process: process, Source: NA}
}

func memText(m Memory) string { return orNA(m.Bytes > 0, func() string { return bytesText(m.Bytes) }) }

// OhaCommands returns the oha command lines closest to the run's settings,
// one per scenario (and rate).
func OhaCommands(s Settings) []string {
	var out []string
	line := func(args string, t Target) {
		if t.NoCache {
			args += " -H 'Cache-Control: no-cache'"
		}
		out = append(out, fmt.Sprintf("oha %s '%s%s'", args, strings.TrimRight(s.BaseURL, "/"), t.Path))
	}
	for _, t := range Scenarios() {
		if s.Requests == 0 {
			line(fmt.Sprintf("-z %s -c %d", s.Duration, s.Concurrency), t)
		} else {
			line(fmt.Sprintf("-n %d -c %d", s.Requests, s.Concurrency), t)
		}
	}
	for _, rate := range s.Rates {
		for _, t := range Scenarios() {
			line(fmt.Sprintf("-z %s -c %d -q %g --latency-correction", s.OpenDuration, s.MaxInFlight, rate), t)
		}
	}
	return out
}

func pct(v float64) string { return fmt.Sprintf("%.2f%%", v*100) }

func pctOrNA(v float64) string {
	return orNA(v > 0, func() string { return fmt.Sprintf("%.1f%%", v*100) })
}

func ratioText(v float64) string {
	return orNA(v > 0, func() string { return fmt.Sprintf("%.2fx", v) })
}

func bytesText(n int64) string { return units.BytesSize(float64(n)) }

func seconds(d time.Duration) string {
	return orNA(d > 0, func() string { return fmt.Sprintf("%.2f", d.Seconds()) })
}

func rateList(rates []float64) string {
	parts := make([]string, len(rates))
	for i, r := range rates {
		parts[i] = fmt.Sprintf("%g", r)
	}
	return strings.Join(parts, ", ")
}

func cacheList(m map[string]int64) string {
	if len(m) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s×%d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// count formats n with thousands separators: 1,000,000.
func count(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// sizeLabel names a data size: "100,000 orders", or "current data" when the
// count is unknown (negative).
func sizeLabel(orders int64) string {
	if orders < 0 {
		return "current data"
	}
	return count(orders) + " orders"
}
