package bench

import (
	"fmt"
	"strings"
)

// DocsSummary renders the part of a report that a docs page shows: when and where it
// ran, then requests/sec with p99 and freshness with CPU per change, one row per
// size (the scale tables of Markdown, with headings one level down). The full
// report stays in the results directory.
func DocsSummary(r *Report) string {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "Run of %s: %d cores (%s), %s, Go %s, Docker %s; %d connections, %g writes/s.",
		r.Started.UTC().Format("2006-01-02 15:04 UTC"), m.Cores, m.CPU, bytesText(m.MemoryBytes), m.GoVersion, m.Docker,
		r.Settings.Concurrency, r.Settings.WriteRate)
	if r.Settings.Quick {
		b.WriteString(" A quick run (--quick): too short for numbers to quote.")
	}
	b.WriteString("\n\n")
	var t strings.Builder
	writeScale(&t, r.Sizes)
	writeScaleFreshness(&t, r.Sizes)
	b.WriteString(strings.ReplaceAll(t.String(), "\n## Scale: ", "\n### "))
	return strings.TrimSpace(strings.Replace(b.String(), "## Scale: ", "### ", 1))
}
