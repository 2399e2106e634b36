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
	"sec":       func(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) },
	"endpoints": func() []string { return Endpoints },
	"runtimes":  func() []string { return []string{ServiceAccelerated, ServiceMaterialized} },
	"mib": func(b int64) string {
		if b <= 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.0f", float64(b)/(1<<20))
	},
	"kib": func(b int64) int64 { return b >> 10 },
	"lag": lagText, "loads": loads, "findings": findings,
	"sum": func(m map[string]int) (n int) {
		for _, v := range m {
			n += v
		}
		return n
	},
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

// loads are the load rounds.
func loads(results []Result) []Result {
	var out []Result
	for _, r := range results {
		if r.Load != nil {
			out = append(out, r)
		}
	}
	return out
}

// lagText is a runtime's largest reported lag: "1.5 s / 2 KiB".
func lagText(l *LoadFindings, runtime string) string {
	sec, okS := l.LagSeconds[runtime]
	by, okB := l.LagBytes[runtime]
	if !okS && !okB {
		return "not reported"
	}
	return fmt.Sprintf("%.1f s / %d KiB", sec, by>>10)
}

// findings are every round's error and details, one line each.
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
