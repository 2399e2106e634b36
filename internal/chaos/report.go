package chaos

import (
	"fmt"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// Report is a whole run: where, with which settings, and every round.
type Report struct {
	Started  time.Time
	Machine  bench.Machine
	Settings string // one line: rate, readers, partition, quiet period
	Results  []Result
}

// Markdown renders the report: the settings, one table row per fault, then
// the details of every round that found something.
func Markdown(r Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Chaos run %s\n\n", r.Started.UTC().Format("2006-01-02 15:04 MST"))
	m := r.Machine
	fmt.Fprintf(&b, "Machine: %d cores, %s, %s, %s, Docker %s. %s\n\n", m.Cores, m.CPU, m.OS, m.GoVersion, m.Docker, r.Settings)
	b.WriteString("Error window (err s): seconds spanned by requests that got a non-2xx answer or none; " +
		"in brackets, when different, only those sent without a Spice-Min-Position " +
		"(with one, a runtime that cannot catch up answers 504 after its bounded wait). " +
		"Recover: fault end until all three rankings answer 2xx reflecting every acknowledged order. " +
		"Lost/doubled: acknowledged orders missing from, or held twice by, Postgres or the accelerated runtime's `orders`. " +
		"RYW: answers below the Spice-Min-Position sent. Monotonic: a reader's positions going back. " +
		"Watermark: a runtime's watermark going back. Unexpected: non-2xx on endpoints not depending on the failed part.\n\n")
	b.WriteString("| Fault | err s /orders | err s /ranking | err s /ranking-accelerated | err s /ranking-materialized | Recover | Acked | Lost | Doubled | Equal after quiet | RYW | Monotonic | Watermark | Unexpected |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|:-:|--:|--:|--:|--:|\n")
	for _, res := range r.Results {
		fmt.Fprintf(&b, "| %s |", res.Fault)
		for _, ep := range Endpoints {
			if n, p := res.ErrorSeconds[ep], res.PlainErrorSeconds[ep]; ep != EndpointOrders && n != p {
				fmt.Fprintf(&b, " %d (%d) |", n, p)
			} else {
				fmt.Fprintf(&b, " %d |", n)
			}
		}
		rec := fmt.Sprintf("%.1f s", res.Recover.Seconds())
		if !res.Recovered {
			rec = "not in " + rec
		}
		fmt.Fprintf(&b, " %s | %d/%d | %d | %d | %s | %d | %d | %d | %d |\n", rec, res.Acked, res.Writes,
			res.Lost, res.Doubled, yesNo(res.Converged && res.Mismatches == 0), res.RYW, res.Monotonic, res.Watermarks, res.Unexpected)
	}
	b.WriteString("\nFaults:\n\n")
	for _, res := range r.Results {
		fmt.Fprintf(&b, "- `%s`: %s.\n", res.Fault, res.Description)
	}
	var notes []string
	for _, res := range r.Results {
		if res.Err != "" {
			notes = append(notes, fmt.Sprintf("- `%s`: error: %s", res.Fault, oneLine(res.Err)))
		}
		for _, d := range res.Details {
			notes = append(notes, fmt.Sprintf("- `%s`: %s", res.Fault, oneLine(d)))
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nFindings:\n\n" + strings.Join(notes, "\n") + "\n")
	}
	return b.String()
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}
