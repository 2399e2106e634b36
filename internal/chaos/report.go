package chaos

import (
	_ "embed"
	"fmt"
	"strings"
	"text/template"
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

//go:embed report.md.tmpl
var reportText string

var report = template.Must(template.New("").Funcs(template.FuncMap{
	"goal": func() time.Duration { return RecoveryGoal }, "inflight": func() int { return DefaultWritesInFlight },
	"sec":        func(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) },
	"errorCells": errorCells, "loadRows": loadRows, "findings": findings,
}).Parse(reportText))

// Markdown renders the report: the settings, one table row per fault, then
// the details of every round that found something.
func Markdown(r Report) string {
	var b strings.Builder
	if err := report.ExecuteTemplate(&b, "report", r); err != nil {
		panic("render the chaos report: " + err.Error()) // the template is the program's own
	}
	return b.String()
}

// errorCells are a round's error windows per endpoint: "3", or "32 (0)" when
// the reads sent without a token failed for fewer seconds.
func errorCells(res Result) []string {
	var out []string
	for _, ep := range Endpoints {
		n, p := res.ErrorSeconds[ep], res.PlainErrorSeconds[ep]
		if ep != EndpointOrders && n != p {
			out = append(out, fmt.Sprintf("%d (%d)", n, p))
		} else {
			out = append(out, fmt.Sprint(n))
		}
	}
	return out
}

func findings(results []Result) []string {
	oneLine := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		return s[:min(len(s), 400)]
	}
	var out []string
	for _, res := range results {
		if res.Err != "" {
			out = append(out, fmt.Sprintf("`%s`: error: %s", res.Fault, oneLine(res.Err)))
		}
		for _, d := range res.Details {
			out = append(out, fmt.Sprintf("`%s`: %s", res.Fault, oneLine(d)))
		}
	}
	return out
}

// loadRows are the load rounds' rows: rates, memory, lag, catch-up.
func loadRows(results []Result) []string {
	mib := func(b int64) string {
		if b <= 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.0f", float64(b)/(1<<20))
	}
	var out []string
	for _, res := range results {
		l := res.Load
		if l == nil {
			continue
		}
		asked := fmt.Sprintf("%.0f", l.Rate)
		if l.Overload > 0 {
			asked += fmt.Sprintf(" -> %.0f", l.Overload)
		}
		cells := []string{res.Fault, asked, fmt.Sprintf("%.0f", l.Achieved), fmt.Sprint(l.Skipped)}
		for _, rt := range []string{ServiceAccelerated, ServiceMaterialized} {
			cells = append(cells, mib(l.BaseRSS[rt])+" -> "+mib(l.PeakRSS[rt]))
		}
		for _, rt := range []string{ServiceAccelerated, ServiceMaterialized} {
			sec, okS := l.LagSeconds[rt]
			by, okB := l.LagBytes[rt]
			if !okS && !okB {
				cells = append(cells, "not reported")
			} else {
				cells = append(cells, fmt.Sprintf("%.1f s / %d KiB", sec, by>>10))
			}
		}
		for _, rt := range []string{ServiceAccelerated, ServiceMaterialized} {
			cells = append(cells, fmt.Sprintf("%d KiB", l.Behind[rt]>>10))
		}
		cells = append(cells, fmt.Sprintf("%.1f s", l.CatchUp.Seconds()))
		out = append(out, "| "+strings.Join(cells, " | ")+" |")
	}
	return out
}
