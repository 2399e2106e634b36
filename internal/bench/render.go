package bench

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/docker/go-units"

	"github.com/cqrs-spice/cqrs/internal/docgen"
)

// Goal outcomes; Figure marks a figure that has no goal of its own.
const (
	Pass   = "PASS"
	Miss   = "MISS"
	NA     = "n/a"
	Figure = "figure"
)

// Goal is one goal with what a run measured.
type Goal struct {
	Goal   string `json:"goal"`
	Got    string `json:"got"`
	Status string `json:"status"` // Pass, Miss, NA or Figure
}

func notMeasured(name string) Goal { return Goal{name, "not measured", NA} }

func status(ok bool) string {
	if ok {
		return Pass
	}
	return Miss
}

//go:embed templates/*.tmpl
var templateFiles embed.FS

// templates are the reports' Markdown, parsed on first use; their helpers
// make every report format numbers the same way.
var templates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"ms": fmtMS, "pct": pct, "pctOrNA": pctOrNA, "ratio": ratioText, "bytes": bytesText, "rates": rateList,
		"statuses": statusList, "cacheList": cacheList, "lag": lagText, "hop": hopTitle, "cpu": cpuText,
		"size": sizeLabel, "count": count, "mem": memText, "utc": utc, "seconds": seconds, "oha": OhaCommands,
		"scenarios": Scenarios, "find": find, "fresh": findFreshness, "cpuOf": cpuOf, "cpuSum": cpuSum,
		"cpuProcs": cpuProcs, "memoryOf": memoryOf, "readCPUText": readCPUText, "readGross": readGross,
		"notSeen": notSeenText, "notSeenExamples": notSeenExamples,
		"bytesPerSecond": func(s Summary) string { return bytesText(int64(ratio(float64(s.Bytes), s.Elapsed.Seconds()))) },
		"list":           func(xs ...any) []any { return xs },
		"runtimes":       func() []string { return []string{ProcAccelerated, ProcMaterialized} },
		"watermarkHops":  func() []string { return watermarkHops },
		// the write benchmark's
		"configs":     func() []string { return []string{ConfigCommand, ConfigChain} },
		"writesProcs": func() []string { return []string{ProcAPI, ProcPostgres, ProcAccelerated, ProcMaterialized, ProcBench} },
		"shortSteps": func(r *WritesReport) bool {
			return r.Settings.Step < DefaultWriteStep || r.Settings.Rounds < DefaultWriteRounds
		},
		"sustainedRow": sustainedRow, "chainRatio": chainRatio, "sortedSteps": sortedSteps, "stepFailures": stepFailures,
		"hopText": hopText, "trendText": trendText, "catchUp": catchUpText, "verdict": verdictText, "off": offText,
		"stepCPUSum": stepCPUSum,
		// the restart benchmark's
		"target":    func(t string) string { return cmp.Or(restartTargets[t], t) },
		"rate":      func(r float64) string { return orNA(r > 0, count(int64(r))) },
		"perSecond": func(n int64, d time.Duration) float64 { return ratio(float64(n), d.Seconds()) },
		"pair":      pairText, "startPath": startPath, "orNA": orNA,
	}).ParseFS(templateFiles, "templates/*.tmpl"))
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

// UpdateDocs writes body into the generated block of page, stamped with
// started and the commit, and says so on out; a missing page (the tool run
// outside the repository) is left alone.
func UpdateDocs(page, block, body string, started time.Time, out io.Writer) {
	stamp := docgen.Stamp{Time: started, Commit: docgen.Commit(context.Background(), filepath.Dir(page))}
	switch err := docgen.UpdateFile(page, block, body, stamp); {
	case err == nil:
		fmt.Fprintf(out, "docs: %s updated (%s)\n", page, block)
	case !errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(out, "note: %v\n", err)
	}
}

// Markdown renders a scale run's report: per size, a table shaped like the
// recipe's, the details oha prints, open-loop tables, CPU, freshness, memory
// and the goals; then the scale summary and the equivalent oha commands.
func Markdown(r *Report) string {
	c := *r
	c.Sizes = slices.Clone(r.Sizes)
	for i, s := range c.Sizes {
		if s.Goals == nil {
			c.Sizes[i].Goals = Goals(s, r.Settings.Concurrency)
		}
	}
	return render("scale-report", &c)
}

// DocsSummary is the part of a scale run's report a docs page shows: when and
// where it ran, then the scale tables.
func DocsSummary(r *Report) string { return render("scale-docs", r) }

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

// hopTitles describe the hops in the freshness table.
var hopTitles = map[string]string{
	HopPostgres:            "Postgres (`/ranking`, baseline)",
	HopAccelerated:         "accelerated (`/ranking-accelerated`)",
	HopMaterialized:        "materialized (`/ranking-materialized`, end to end)",
	HopAcceleratedRuntime:  "accelerated runtime (HTTP `/v1/sql`, no api)",
	HopMaterializedRuntime: "materialized runtime (HTTP `/v1/sql`, no api)",
}

func hopTitle(hop string) string { return cmp.Or(hopTitles[hop], hop) }

// cpuSum is the sum of the gross CPU per operation of processes in cs, or
// n/a when one is unknown.
func cpuSum(cs []ProcessCPU, processes []string) string {
	var sum float64
	for _, p := range processes {
		c := cpuOf(cs, p)
		if c == nil || c.Why != "" {
			return NA
		}
		sum += c.PerOp
	}
	return fmt.Sprintf("%.0f", sum)
}

// cpuText is "gross (net)" microseconds, or the gross alone, or n/a.
func cpuText(c *ProcessCPU) string {
	switch {
	case c == nil || c.Why != "":
		return NA
	case c.HasNet:
		return fmt.Sprintf("%.0f (%.0f)", c.PerOp, c.NetPerOp)
	}
	return fmt.Sprintf("%.0f", c.PerOp)
}

func memoryOf(ms []Memory, process string) Memory {
	for _, m := range ms {
		if m.Process == process {
			return m
		}
	}
	return Memory{Process: process, Source: NA}
}

func memText(m Memory) string { return orNA(m.Bytes > 0, bytesText(m.Bytes)) }

// orNA is text, or n/a when not ok.
func orNA(ok bool, text string) string {
	if !ok {
		return NA
	}
	return text
}

// fmtMS formats a duration in milliseconds with two decimals.
func fmtMS(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

// lagText formats a freshness percentile: "-" when no write was seen.
func lagText(f Freshness, d time.Duration) string {
	if f.Reached == 0 {
		return "-"
	}
	return fmtMS(d)
}

func pct(v float64) string           { return fmt.Sprintf("%.2f%%", v*100) }
func pctOrNA(v float64) string       { return orNA(v > 0, fmt.Sprintf("%.1f%%", v*100)) }
func ratioText(v float64) string     { return orNA(v > 0, fmt.Sprintf("%.2fx", v)) }
func bytesText(n int64) string       { return units.BytesSize(float64(n)) }
func seconds(d time.Duration) string { return orNA(d > 0, fmt.Sprintf("%.2f", d.Seconds())) }
func utc(t time.Time) string         { return t.UTC().Format("2006-01-02 15:04 UTC") }

func rateList(rates []float64) string {
	parts := make([]string, len(rates))
	for i, r := range rates {
		parts[i] = fmt.Sprintf("%g", r)
	}
	return strings.Join(parts, ", ")
}

// tally formats counts in key order: "200×953", "500×47".
func tally[K cmp.Ordered](m map[K]int64) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%v×%d", k, m[k]))
	}
	return out
}

// statusList formats a status-code distribution, errors included: "200×19953,
// 500×47, timeout×2".
func statusList(s Summary) string {
	return cmp.Or(strings.Join(append(tally(s.StatusCodes), tally(s.Errors)...), ", "), "none")
}

func cacheList(m map[string]int64) string { return cmp.Or(strings.Join(tally(m), ", "), "-") }

// reasonList formats why writes were not seen: "status 504×3, timeout×1".
func reasonList(rs []Reason) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%s×%d", r.Why, r.Count)
	}
	return strings.Join(parts, ", ")
}

// count formats n with thousands separators: 1,000,000.
func count(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// sizeLabel names a data size: "100,000 orders", or "current data" when the
// count is unknown (negative).
func sizeLabel(orders int64) string {
	if orders < 0 {
		return "current data"
	}
	return count(orders) + " orders"
}
