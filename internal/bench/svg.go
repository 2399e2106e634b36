package bench

import (
	"fmt"
	"html"
	"strings"
)

// Layout of the chart, in pixels.
const (
	svgWidth  = 960
	svgLabelW = 380
	svgBarW   = 460
	svgRowH   = 18
	svgGap    = 28
)

// scenarioColors color the scenarios in the order of Scenarios(); hopColors the
// freshness hops.
var (
	scenarioColors = []string{"#9e9e9e", "#d62728", "#1f77b4", "#aec7e8", "#2ca02c", "#98df8a"}
	hopColors      = map[string]string{
		HopPostgres: "#d62728", HopAccelerated: "#1f77b4", HopMaterialized: "#2ca02c",
		HopAcceleratedRuntime: "#aec7e8", HopMaterializedRuntime: "#98df8a",
	}
)

type svgBar struct {
	label string
	value float64
	text  string
	color string
}

// SVG renders the report as a chart: closed-loop requests/sec and p99 per path and
// size, and write-to-visible p50/p99 per hop and size (under load). Plain SVG text,
// readable on GitHub.
func SVG(r *Report) string {
	var body strings.Builder
	y := 40
	var thr, p99, fresh []svgBar
	for _, s := range r.Sizes {
		size := sizeLabel(s.Orders)
		for i, t := range Scenarios() {
			res := find(s.Closed, t.Path, t.NoCache)
			if res == nil {
				continue
			}
			color := scenarioColors[i%len(scenarioColors)]
			label := size + " · " + t.Name
			m := res.Summary
			thr = append(thr, svgBar{label, m.RPS(), fmt.Sprintf("%.0f req/s", m.RPS()), color})
			p99 = append(p99, svgBar{label, ms(m.P99), fmtMS(m.P99) + " ms", color})
		}
		for _, f := range s.Freshness {
			if f.Phase != PhaseLoad || f.Reached == 0 {
				continue
			}
			label := size + " · " + f.Hop
			fresh = append(fresh,
				svgBar{label + " p50", ms(f.P50), fmtMS(f.P50) + " ms", hopColors[f.Hop]},
				svgBar{label + " p99", ms(f.P99), fmtMS(f.P99) + " ms", hopColors[f.Hop]})
		}
	}
	y = barChart(&body, y, fmt.Sprintf("Requests/sec, closed loop at %d connections (higher is better)", r.Settings.Concurrency), thr)
	y = barChart(&body, y, "p99 latency, closed loop (lower is better)", p99)
	if len(fresh) > 0 {
		y = barChart(&body, y, "Write-to-visible lag under load, p50 and p99 (lower is better)", fresh)
	}
	return svgDocument(fmt.Sprintf("CQRS benchmark, %s, %d cores, %s", r.Started.UTC().Format("2006-01-02"), r.Machine.Cores, r.Machine.GoVersion), y, body.String())
}

// svgDocument wraps charts of height pixels in an SVG document under title.
func svgDocument(title string, height int, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		svgWidth, height, svgWidth, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", esc(title))
	b.WriteString(body)
	b.WriteString("</svg>\n")
	return b.String()
}

// barChart draws one titled chart of horizontal bars scaled to the largest value,
// starting at y, and returns the y below it.
func barChart(b *strings.Builder, y int, title string, bars []svgBar) int {
	fmt.Fprintf(b, `<text x="10" y="%d" font-size="13" font-weight="bold">%s</text>`+"\n", y+4, esc(title))
	y += 14
	if len(bars) == 0 {
		fmt.Fprintf(b, `<text x="10" y="%d">not measured</text>`+"\n", y+12)
		return y + svgRowH + svgGap
	}
	top := 0.0
	for _, bar := range bars {
		top = max(top, bar.value)
	}
	for _, bar := range bars {
		w := 0
		if top > 0 {
			w = max(int(bar.value/top*svgBarW), 1)
		}
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">%s</text>`, svgLabelW-6, y+13, esc(bar.label))
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`, svgLabelW, y+2, w, svgRowH-4, orDefault(bar.color, "#666666"))
		fmt.Fprintf(b, `<text x="%d" y="%d">%s</text>`+"\n", svgLabelW+w+4, y+13, esc(bar.text))
		y += svgRowH
	}
	return y + svgGap
}

func esc(s string) string { return html.EscapeString(s) }
