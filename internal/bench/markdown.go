package bench

import (
	"fmt"
	"sort"
	"strings"

	"github.com/docker/go-units"
)

// hopTitles describe the hops in the freshness table.
var hopTitles = map[string]string{
	HopPostgres:            "Postgres (`/ranking`, baseline)",
	HopAccelerated:         "accelerated (`/ranking-accelerated`)",
	HopMaterialized:        "materialized (`/ranking-materialized`, end to end)",
	HopAcceleratedRuntime:  "accelerated runtime (HTTP `/v1/sql`, no api)",
	HopMaterializedRuntime: "materialized runtime (HTTP `/v1/sql`, no api)",
}

// Markdown renders the report: per size, a table shaped like the recipe's, the
// details oha prints, open-loop tables, freshness, memory and the goals; then the
// scale summary and the equivalent oha commands.
func Markdown(r *Report) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Benchmark: Local Materialization and Acceleration CQRS\n\n")
	p("Run of %s against %s", r.Started.UTC().Format("2006-01-02 15:04:05 UTC"), r.Settings.BaseURL)
	if r.Command != "" {
		p(":\n\n```sh\n%s\n```\n\n", r.Command)
	} else {
		p(".\n\n")
	}
	writeMachine(&b, r.Machine)
	writeSettings(&b, r.Settings)
	for _, s := range r.Sizes {
		writeSize(&b, r.Settings, s)
	}
	if len(r.Sizes) > 1 {
		writeScale(&b, r.Sizes)
		writeScaleFreshness(&b, r.Sizes)
	}
	p("## Reproduce one scenario at a time with oha\n\n")
	p("oha runs one endpoint at a time, without the interleaving, the write load or the freshness reads:\n\n```sh\n")
	for _, c := range OhaCommands(r.Settings) {
		p("%s\n", c)
	}
	p("```\n")
	if len(r.Notes) > 0 {
		p("\n## Notes\n\n")
		for _, n := range r.Notes {
			p("- %s\n", n)
		}
	}
	return b.String()
}

func writeMachine(b *strings.Builder, m Machine) {
	fmt.Fprintf(b, "## Machine\n\n| Cores | CPU | Memory | OS | Kernel | Go | Docker |\n|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s | %s |\n\n", m.Cores, m.CPU, bytesText(m.MemoryBytes), m.OS, m.Kernel, m.GoVersion, m.Docker)
}

func writeSettings(b *strings.Builder, s Settings) {
	load := fmt.Sprintf("%d requests", s.Requests)
	if s.Requests == 0 {
		load = s.Duration.String()
	}
	fmt.Fprintf(b, "## Settings\n\n")
	if s.Quick {
		fmt.Fprintf(b, "- Quick run (--quick): a smoke test, too short for numbers to quote.\n")
	}
	fmt.Fprintf(b, "- Closed loop (as `oha -n/-z -c`): %s per scenario at %d connections, in %d interleaved rounds, after a %s warm-up per scenario.\n",
		load, s.Concurrency, s.Rounds, s.Warmup)
	if len(s.Rates) > 0 {
		fmt.Fprintf(b, "- Open loop (as `oha -q --latency-correction`): %s req/s, %s per scenario and rate, latency from each request's due time.\n",
			rateList(s.Rates), s.OpenDuration)
	}
	fmt.Fprintf(b, "- Writes: POST /orders at %g/s for the whole run.\n", s.WriteRate)
	fmt.Fprintf(b, "- Freshness: every %d. write is read once on every hop with `Spice-Min-Position: <its token>` (all writes happen; tracing each would add a read per write and hop), at most %d such reads in flight per hop; a %s window with writes and those reads only, then the throughput rounds.\n",
		max(s.FreshnessSample, 1), s.FreshnessConcurrency, s.FreshnessWindow)
	fmt.Fprintf(b, "- Success rate counts 2xx answers only (oha counts any answer); Requests/sec counts every answer, as oha does, but the ratios compare 2xx answers per second, so a path that fails fast never looks fast. Latencies are from HDR histograms (3 significant digits), of answered requests.\n")
	fmt.Fprintf(b, "- Write-to-visible lag: from the write's answer (its Spice-Position token) to the answer of the hop's read of it, which the server sends only once it reflects the token (it waits about 10 s at most, then answers 504). Nothing is subtracted: the lag includes one read's latency. The reads keep the results cache on, as any reader: with a minimum position no answer is older than the token, cached or not. Each answer's Spice-Position is checked to be at or past the token; one below is a read-your-writes violation, reported as such. A write whose read failed (504, error, or still waiting at the end of the grace period) counts as not seen, with the reason.\n\n")
}

func writeSize(b *strings.Builder, set Settings, s SizeResult) {
	fmt.Fprintf(b, "## %s\n\n", sizeLabel(s.Orders))
	fmt.Fprintf(b, "| Scenario | Success Rate | Total Time (secs) | Slowest (ms) | Fastest (ms) | Average (ms) | Requests/sec | p50 (ms) | p99 (ms) | p99.9 (ms) | ratio vs /ranking | %% of ceiling |\n")
	fmt.Fprintf(b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range s.Closed {
		m := r.Summary
		fmt.Fprintf(b, "| %s | %s | %.4f | %s | %s | %s | %.1f | %s | %s | %s | %s | %s |\n",
			r.Target.Name, pct(m.SuccessRate()), m.Elapsed.Seconds(), fmtMS(m.Slowest), fmtMS(m.Fastest), fmtMS(m.Average),
			m.RPS(), fmtMS(m.P50), fmtMS(m.P99), fmtMS(m.P999), ratioText(r.VsRanking), pctOrNA(r.OfCeiling))
	}
	fmt.Fprintf(b, "\n| Scenario | Requests | Status codes | p90 (ms) | Size/request | Size/sec | Results cache |\n|---|---:|---|---:|---:|---:|---|\n")
	for _, r := range s.Closed {
		m := r.Summary
		perSec := 0.0
		if m.Elapsed > 0 {
			perSec = float64(m.Bytes) / m.Elapsed.Seconds()
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %.0f B | %s/s | %s |\n",
			r.Target.Name, m.Requests, statusList(m), fmtMS(m.P90), m.BytesPerRequest(), bytesText(int64(perSec)), cacheList(m.Cache))
	}
	b.WriteString("\n")
	for _, o := range s.Open {
		writeOpen(b, o)
	}
	writeCPU(b, s)
	writeFreshness(b, s)
	writeWatermarks(b, s)
	writeMemory(b, s.Memory)
	fmt.Fprintf(b, "### Goals of the read path (stated for 100k orders, 100 writes/s, 2 cores, 100 connections)\n\n| Goal | Measured | |\n|---|---|---|\n")
	for _, g := range Goals(s, set.Concurrency) {
		fmt.Fprintf(b, "| %s | %s | **%s** |\n", g.Goal, g.Got, g.Status)
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "### Goals at scale\n\n| Goal | Measured | |\n|---|---|---|\n")
	for _, g := range Goals14(s) {
		fmt.Fprintf(b, "| %s | %s | **%s** |\n", g.Goal, g.Got, g.Status)
	}
	b.WriteString("\n")
	for _, n := range s.Notes {
		fmt.Fprintf(b, "- %s\n", n)
	}
	if len(s.Notes) > 0 {
		b.WriteString("\n")
	}
}

func writeOpen(b *strings.Builder, o OpenResult) {
	fmt.Fprintf(b, "### Open loop at %g req/s\n\n", o.Rate)
	fmt.Fprintf(b, "| Scenario | Success Rate | Achieved req/s | p50 (ms) | p90 (ms) | p99 (ms) | p99.9 (ms) | Slowest (ms) | Status codes |\n")
	fmt.Fprintf(b, "|---|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range o.Results {
		m := r.Summary
		fmt.Fprintf(b, "| %s | %s | %.1f | %s | %s | %s | %s | %s | %s |\n", r.Target.Name, pct(m.SuccessRate()), m.RPS(),
			fmtMS(m.P50), fmtMS(m.P90), fmtMS(m.P99), fmtMS(m.P999), fmtMS(m.Slowest), statusList(m))
	}
	b.WriteString("\n")
}

func writeFreshness(b *strings.Builder, s SizeResult) {
	fmt.Fprintf(b, "### Freshness: write-to-visible lag per hop\n\n")
	if len(s.Freshness) == 0 {
		fmt.Fprintf(b, "Not measured: no writes (--write-rate 0) or no successful write.\n\n")
	} else {
		writeViolations(b, s.Freshness)
		fmt.Fprintf(b, "| Hop | Phase | Writes | Seen | Not seen | Violations | p50 (ms) | p99 (ms) | Max (ms) |\n|---|---|---:|---:|---|---:|---:|---:|---:|\n")
		for _, f := range s.Freshness {
			fmt.Fprintf(b, "| %s | %s | %d | %d | %s | %d | %s | %s | %s |\n", hopTitle(f.Hop), f.Phase, f.Writes, f.Reached,
				notSeenText(f), f.Violations, lagText(f, f.P50), lagText(f, f.P99), lagText(f, f.Max))
		}
		b.WriteString("\n")
		writeReasons(b, s.Freshness)
	}
	w := s.Writer
	if w.Requests > 0 {
		fmt.Fprintf(b, "Writes: %d POST /orders, %s 2xx (%s), %.1f/s, p50 %s ms, p99 %s ms.\n\n",
			w.Requests, pct(w.SuccessRate()), statusList(w), w.RPS(), fmtMS(w.P50), fmtMS(w.P99))
	}
}

// writeViolations puts read-your-writes violations above the freshness table: an
// answer below its Spice-Min-Position is a bug of the hop, whatever the timings.
func writeViolations(b *strings.Builder, fs []Freshness) {
	for _, f := range fs {
		if f.Violations > 0 {
			fmt.Fprintf(b, "> **READ-YOUR-WRITES VIOLATED** on %s (%s): %d answers at a position below their Spice-Min-Position (first: %s).\n\n",
				hopTitle(f.Hop), f.Phase, f.Violations, f.Violation)
		}
	}
}

// writeReasons lists the first message of each reason a write was not seen.
func writeReasons(b *strings.Builder, fs []Freshness) {
	wrote := false
	for _, f := range fs {
		for _, r := range f.NotSeen {
			if r.Example == "" {
				continue
			}
			if !wrote {
				b.WriteString("Not seen, first message per reason:\n\n")
				wrote = true
			}
			fmt.Fprintf(b, "- %s, %s, %s: %q\n", f.Hop, f.Phase, r.Why, r.Example)
		}
	}
	if wrote {
		b.WriteString("\n")
	}
}

func hopTitle(hop string) string {
	if t := hopTitles[hop]; t != "" {
		return t
	}
	return hop
}

// notSeenText is the Not seen cell: "0", or "3 (status 504×2, timeout×1)".
func notSeenText(f Freshness) string {
	n := f.Unreached - f.Violations
	if n <= 0 || len(f.NotSeen) == 0 {
		return fmt.Sprint(max(n, 0))
	}
	return fmt.Sprintf("%d (%s)", n, reasonList(f.NotSeen))
}

// writeCPU renders each process's CPU per request of each scenario, and per
// change in the changes window.
func writeCPU(b *strings.Builder, s SizeResult) {
	procs := cpuProcesses(s)
	if len(procs) > 0 {
		fmt.Fprintf(b, "### CPU per request\n\nMicroseconds per request, from each process's CPU counter before and after each slice (gross: everything the process did meanwhile, the writes included), then in parentheses net of the process's background (its CPU per second in the changes window, writes and no reads, times the slices' wall time). The net figure is a hint only: under read load the runtimes batch the writes' work differently, and it can come out negative. The sum is of the gross figures.\n\n| Scenario |")
		for _, p := range procs {
			fmt.Fprintf(b, " %s |", p)
		}
		b.WriteString(" sum |\n|---|" + strings.Repeat("---:|", len(procs)+1) + "\n")
		for _, r := range s.Closed {
			fmt.Fprintf(b, "| %s |", r.Target.Name)
			sum, all := 0.0, true
			for _, p := range procs {
				c := cpuOf(r.CPU, p)
				fmt.Fprintf(b, " %s |", cpuText(c))
				if c == nil || c.Why != "" {
					all = false
				} else {
					sum += c.PerOp
				}
			}
			if all {
				fmt.Fprintf(b, " %.0f |\n", sum)
			} else {
				b.WriteString(" n/a |\n")
			}
		}
		b.WriteString("\n")
		if mat := find(s.Closed, PathMaterialized, false); mat != nil {
			if v, net, hasNet, ok := ReadCPU(mat.CPU); ok {
				fmt.Fprintf(b, "CPU per materialized read (api + runtime 2, cache on): **%.0f us**%s (goal <= 80 us); /ranking-materialized at %s of /noop (goal >= 50%%).\n\n", v, netText(net, hasNet), pctOrNA(mat.OfCeiling))
			}
		}
	}
	if c := s.Changes; c != nil {
		fmt.Fprintf(b, "CPU per change (microseconds per write, %d writes in %.1f s of writes only, no reads):", c.Writes, c.Duration.Seconds())
		for _, p := range c.CPU {
			fmt.Fprintf(b, " %s %s;", p.Process, cpuText(&p))
		}
		b.WriteString("\n\n")
		if c.Counted {
			fmt.Fprintf(b, "Meanwhile: %s.\n\n", changeCounts(*c))
		}
	}
}

// changeCounts describes what the runtimes did in a changes window besides
// applying the writes.
func changeCounts(c ChangeCost) string {
	per := func(n int64) float64 {
		if c.Writes <= 0 {
			return 0
		}
		return float64(n) / float64(c.Writes)
	}
	avg := func(ms float64, n int64) float64 {
		if n <= 0 {
			return 0
		}
		return ms / float64(n)
	}
	return fmt.Sprintf("runtime 1 answered %d queries (%.2f per write, %.1f ms each in its engine: runtime 2's refreshes read the whole view); runtime 2 refreshed rankings %d times (%.2f per write, %.1f ms each)",
		c.Queries, per(c.Queries), avg(c.QueryMillis, c.Queries), c.Refreshes, per(c.Refreshes), avg(c.RefreshMillis, c.Refreshes))
}

// cpuProcesses are the processes of the first scenario with CPU readings.
func cpuProcesses(s SizeResult) []string {
	for _, r := range s.Closed {
		if len(r.CPU) > 0 {
			out := make([]string, len(r.CPU))
			for i, c := range r.CPU {
				out[i] = c.Process
			}
			return out
		}
	}
	return nil
}

func writeWatermarks(b *strings.Builder, s SizeResult) {
	if len(s.Watermarks) == 0 {
		return
	}
	fmt.Fprintf(b, "### Freshness from the runtimes' watermarks (freshness window)\n\n")
	fmt.Fprintf(b, "From each write's acknowledgement to the answer of a query that reads no data (`SELECT 1 FROM <table> WHERE false`) sent to the runtime's HTTP API with `Spice-Min-Position: <token>`: the runtime answers when its watermark of the table covers the token (woken by the watermark's change, no polling), so the lag is the watermark's plus one trivial query, without the api or the view.\n\n")
	fmt.Fprintf(b, "| Hop | Writes | Covered | Not covered | p50 (ms) | p99 (ms) | Max (ms) |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, f := range s.Watermarks {
		fmt.Fprintf(b, "| %s | %d | %d | %d | %s | %s | %s |\n", f.Hop, f.Writes, f.Reached, f.Unreached, lagText(f, f.P50), lagText(f, f.P99), lagText(f, f.Max))
	}
	b.WriteString("\n")
}

func writeMemory(b *strings.Builder, ms []Memory) {
	if len(ms) == 0 {
		return
	}
	fmt.Fprintf(b, "Runtime memory (resident) after the rounds:")
	for _, m := range ms {
		fmt.Fprintf(b, " %s %s (%s);", m.Runtime, memText(m), m.Source)
	}
	b.WriteString("\n\n")
}

func writeScale(b *strings.Builder, sizes []SizeResult) {
	scen := Scenarios()
	b.WriteString("## Scale: requests/sec and p99 by size\n\n| Orders |")
	for _, t := range scen {
		fmt.Fprintf(b, " %s |", t.Name)
	}
	b.WriteString(" accelerated memory | materialized memory |\n|---:|")
	b.WriteString(strings.Repeat("---:|", len(scen)+2) + "\n")
	for _, s := range sizes {
		fmt.Fprintf(b, "| %s |", sizeLabel(s.Orders))
		for _, t := range scen {
			if r := find(s.Closed, t.Path, t.NoCache); r != nil {
				fmt.Fprintf(b, " %.1f (p99 %s ms) |", r.Summary.RPS(), fmtMS(r.Summary.P99))
			} else {
				b.WriteString(" n/a |")
			}
		}
		for _, rt := range []string{HopAccelerated, HopMaterialized} {
			fmt.Fprintf(b, " %s |", memText(memoryOf(s.Memory, rt)))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// writeScaleFreshness summarizes, per size, freshness from the watermarks, CPU
// per change and the materialized read path's cost.
func writeScaleFreshness(b *strings.Builder, sizes []SizeResult) {
	b.WriteString("## Scale: freshness from watermarks, CPU per change and per read, by size\n\n")
	b.WriteString("| Orders | seeded in (s) | runtimes synced in (s) | runtime 1 watermark p50 / p99 / max (ms) | runtime 2 watermark p50 / p99 / max (ms) | CPU per change, runtime 1 (us) | CPU per change, runtime 2 (us) | CPU per materialized read, api + runtime 2 (us, gross) | materialized % of /noop |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range sizes {
		fmt.Fprintf(b, "| %s | %.1f | %.1f |", sizeLabel(s.Orders), s.SeedTime.Seconds(), s.SyncTime.Seconds())
		for _, hop := range []string{HopWatermarkAccelerated, HopWatermarkMaterialized} {
			if f := findFreshness(s.Watermarks, hop, PhaseIdle); f != nil && f.Reached > 0 {
				fmt.Fprintf(b, " %s / %s / %s |", fmtMS(f.P50), fmtMS(f.P99), fmtMS(f.Max))
			} else {
				b.WriteString(" n/a |")
			}
		}
		for _, p := range []string{ProcAccelerated, ProcMaterialized} {
			if s.Changes != nil {
				fmt.Fprintf(b, " %s |", cpuText(cpuOf(s.Changes.CPU, p)))
			} else {
				b.WriteString(" n/a |")
			}
		}
		mat := find(s.Closed, PathMaterialized, false)
		if mat != nil {
			if v, _, _, ok := ReadCPU(mat.CPU); ok {
				fmt.Fprintf(b, " %.0f |", v)
			} else {
				b.WriteString(" n/a |")
			}
			fmt.Fprintf(b, " %s |\n", pctOrNA(mat.OfCeiling))
		} else {
			b.WriteString(" n/a | n/a |\n")
		}
	}
	b.WriteString("\n")
}

func memoryOf(ms []Memory, runtime string) Memory {
	for _, m := range ms {
		if m.Runtime == runtime {
			return m
		}
	}
	return Memory{Runtime: runtime, Source: NA}
}

func memText(m Memory) string {
	if m.Bytes <= 0 {
		return NA
	}
	return bytesText(m.Bytes)
}

// OhaCommands returns the oha command lines closest to the run's settings, one per
// scenario (and rate).
func OhaCommands(s Settings) []string {
	var out []string
	for _, t := range Scenarios() {
		args := fmt.Sprintf("-n %d -c %d", s.Requests, s.Concurrency)
		if s.Requests == 0 {
			args = fmt.Sprintf("-z %s -c %d", s.Duration, s.Concurrency)
		}
		out = append(out, ohaLine(args, s.BaseURL, t))
	}
	for _, rate := range s.Rates {
		for _, t := range Scenarios() {
			args := fmt.Sprintf("-z %s -c %d -q %g --latency-correction", s.OpenDuration, s.MaxInFlight, rate)
			out = append(out, ohaLine(args, s.BaseURL, t))
		}
	}
	return out
}

func ohaLine(args, base string, t Target) string {
	if t.NoCache {
		args += " -H 'Cache-Control: no-cache'"
	}
	return fmt.Sprintf("oha %s '%s%s'", args, strings.TrimRight(base, "/"), t.Path)
}

func pct(v float64) string { return fmt.Sprintf("%.2f%%", v*100) }

func pctOrNA(v float64) string {
	if v <= 0 {
		return NA
	}
	return fmt.Sprintf("%.1f%%", v*100)
}

func ratioText(v float64) string {
	if v <= 0 {
		return NA
	}
	return fmt.Sprintf("%.2fx", v)
}

func bytesText(n int64) string { return units.BytesSize(float64(n)) }

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
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, m[k])
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

// sizeLabel names a data size: "100,000 orders", or "current data" when the count
// is unknown (negative).
func sizeLabel(orders int64) string {
	if orders < 0 {
		return "current data"
	}
	return count(orders) + " orders"
}
