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
		"Fault end: when the restarted process answered as ready (process faults; Start is from starting it until then), " +
		"else when the fault was healed. " +
		"Recover: fault end until all three rankings answer 2xx reflecting every acknowledged order. " +
		"Beyond: how long after the fault end the last failed request of any endpoint ended (the error window beyond the fault itself). " +
		fmt.Sprintf("Goal: Recover and Beyond both within %s. ", RecoveryGoal) +
		"Lost/doubled: acknowledged orders missing from, or held twice by, Postgres or the accelerated runtime's `orders`. " +
		"RYW: answers below the Spice-Min-Position sent. Monotonic: a reader's positions going back. " +
		"Watermark: a runtime's watermark going back. Unexpected: non-2xx on endpoints not depending on the failed part.\n\n")
	b.WriteString("| Fault | err s /orders | err s /ranking | err s /ranking-accelerated | err s /ranking-materialized | Start | Recover | Beyond | " +
		fmt.Sprintf("%s goal", RecoveryGoal) + " | Acked | Lost | Doubled | Equal after quiet | RYW | Monotonic | Watermark | Unexpected |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|:-:|--:|--:|--:|:-:|--:|--:|--:|--:|\n")
	for _, res := range r.Results {
		fmt.Fprintf(&b, "| %s |", res.Fault)
		for _, ep := range Endpoints {
			if n, p := res.ErrorSeconds[ep], res.PlainErrorSeconds[ep]; ep != EndpointOrders && n != p {
				fmt.Fprintf(&b, " %d (%d) |", n, p)
			} else {
				fmt.Fprintf(&b, " %d |", n)
			}
		}
		start := "-"
		if res.Start > 0 {
			start = seconds1(res.Start)
		}
		rec := seconds1(res.Recover)
		if !res.Recovered {
			rec = "not in " + rec
		}
		goal := "met"
		if !res.Meets() {
			goal = "**missed**"
		}
		fmt.Fprintf(&b, " %s | %s | %s | %s | %d/%d | %d | %d | %s | %d | %d | %d | %d |\n", start, rec, seconds1(res.Beyond), goal,
			res.Acked, res.Writes, res.Lost, res.Doubled, yesNo(res.Converged && res.Mismatches == 0), res.RYW, res.Monotonic, res.Watermarks, res.Unexpected)
	}
	writeLoad(&b, r.Results)
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

func seconds1(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// writeLoad renders the load rounds' table: rates, memory, lag, catch-up.
func writeLoad(b *strings.Builder, results []Result) {
	var rows []Result
	for _, res := range results {
		if res.Load != nil {
			rows = append(rows, res)
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\nLoad rounds. Asked: orders/s written around the fault (and, after the arrow, during an overload); " +
		"took: orders/s acknowledged between the fault's start and its heal; skipped: writes not sent because " +
		"32 were already waiting for an answer. RSS: resident memory of each runtime before the fault and its peak " +
		"during the round (MiB, from its metrics, every 0.5 s). Lag: the largest lag_seconds / lag_bytes its " +
		"/v1/datasets?status=true reported. Behind: the most WAL between the writer's last token and the runtime's " +
		"lowest watermark. Catch-up: heal (the overload's end) until every ranking reflected every acknowledged order.\n\n")
	b.WriteString("| Fault | Asked /s | Took /s | Skipped | RSS accelerated | RSS materialized | Lag accelerated | Lag materialized | Behind accelerated | Behind materialized | Catch-up |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, res := range rows {
		l := res.Load
		asked := fmt.Sprintf("%.0f", l.Rate)
		if l.Overload > 0 {
			asked += fmt.Sprintf(" -> %.0f", l.Overload)
		}
		fmt.Fprintf(b, "| %s | %s | %.0f | %d |", res.Fault, asked, l.Achieved, l.Skipped)
		for _, rt := range []string{ServiceAccelerated, ServiceMaterialized} {
			fmt.Fprintf(b, " %s -> %s |", mib(l.BaseRSS[rt]), mib(l.PeakRSS[rt]))
		}
		for _, rt := range []string{ServiceAccelerated, ServiceMaterialized} {
			sec, okS := l.LagSeconds[rt]
			by, okB := l.LagBytes[rt]
			switch {
			case !okS && !okB:
				b.WriteString(" not reported |")
			default:
				fmt.Fprintf(b, " %.1f s / %d KiB |", sec, by>>10)
			}
		}
		for _, rt := range []string{ServiceAccelerated, ServiceMaterialized} {
			fmt.Fprintf(b, " %d KiB |", l.Behind[rt]>>10)
		}
		fmt.Fprintf(b, " %s |\n", seconds1(l.CatchUp))
	}
}

func mib(b int64) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", float64(b)/(1<<20))
}
