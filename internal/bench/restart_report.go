package bench

import (
	"fmt"
	"maps"
	"slices"
	"text/template"
	"time"
)

// RestartFileGoal is the bound on a mode: file restart: it resumes, so it
// is ready within this at any size.
const RestartFileGoal = 5 * time.Second

// RestartSummary is the restarts of one target and kind at one size.
type RestartSummary struct {
	Orders         int64
	Target, Kind   string
	Runs, Failed   int
	ReadyMedian    time.Duration
	ReadyMax       time.Duration
	FirstLogMedian time.Duration // 0 when no log said
	ListenMedian   time.Duration // 0 when no log said
	CaughtUpMedian time.Duration // 0 when none caught up
	CaughtUpMax    time.Duration
	NotCaughtUp    int // ready runs whose watermark did not get there in time
	PeakRSS        int64
	// Path says what the start did: a snapshot, a resume, a subscription.
	Path string
	// Reconnects are the feed's failures logged while starting, over all runs;
	// FirstError the first one's error.
	Reconnects int
	FirstError string
	// SnapshotRate is the median rows/s of the snapshots taken; 0 when none.
	SnapshotRate float64
	// CopyRate is rows/s of Postgres's COPY of orders at this size; 0 when not timed.
	CopyRate float64
	// VsCopy is the median over the runs of the snapshot's rows/s over the rows/s
	// of the COPY timed just before it; when no run has its own COPY, SnapshotRate
	// over CopyRate; 0 when neither is known.
	VsCopy float64
}

// SummarizeRestarts groups results by size, target and kind, in the order they
// were measured, with each group's medians and worst cases.
func SummarizeRestarts(results []RestartResult, copies []CopyTiming) []RestartSummary {
	type key struct {
		orders       int64
		target, kind string
	}
	var order []key
	groups := map[key][]RestartResult{}
	for _, r := range results {
		k := key{r.Orders, r.Target, r.Kind}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	out := make([]RestartSummary, 0, len(order))
	for _, k := range order {
		s := summarize(groups[k])
		s.Orders, s.Target, s.Kind = k.orders, k.target, k.kind
		s.CopyRate = copyRate(copies, k.orders)
		if s.VsCopy == 0 && s.SnapshotRate > 0 && s.CopyRate > 0 {
			s.VsCopy = s.SnapshotRate / s.CopyRate
		}
		out = append(out, s)
	}
	return out
}

func summarize(rs []RestartResult) RestartSummary {
	var s RestartSummary
	var ready, first, listen, caught []time.Duration
	var rates, ratios []float64
	for _, r := range rs {
		s.Runs++
		if r.Err != "" {
			s.Failed++
			continue
		}
		ready = append(ready, r.Ready)
		if r.FirstLog > 0 {
			first = append(first, r.FirstLog)
		}
		if r.Listening > 0 {
			listen = append(listen, r.Listening)
		}
		if r.CaughtUp > 0 {
			caught = append(caught, r.CaughtUp)
		} else {
			s.NotCaughtUp++
		}
		s.PeakRSS = max(s.PeakRSS, r.PeakRSS)
		if l := r.Log; l.SnapshotRows > 0 && l.SnapshotTook > 0 {
			rate := float64(l.SnapshotRows) / l.SnapshotTook.Seconds()
			rates = append(rates, rate)
			if r.CopyTook > 0 && r.Orders > 0 {
				ratios = append(ratios, rate/(float64(r.Orders)/r.CopyTook.Seconds()))
			}
		}
		s.Path = startPath(r.Log)
		s.Reconnects += r.Log.Reconnects
		if s.FirstError == "" {
			s.FirstError = r.Log.FirstError
		}
	}
	s.ReadyMedian, s.ReadyMax = medianMax(ready)
	s.FirstLogMedian, _ = medianMax(first)
	s.ListenMedian, _ = medianMax(listen)
	s.CaughtUpMedian, s.CaughtUpMax = medianMax(caught)
	s.SnapshotRate, s.VsCopy = medianOf(rates), medianOf(ratios)
	return s
}

// startPath says in a few words what a start did, from its log.
func startPath(l StartLog) string {
	switch {
	case l.SnapshotRows > 0:
		return fmt.Sprintf("snapshot of %s rows in %s", count(l.SnapshotRows), l.SnapshotTook.Round(time.Millisecond))
	case l.ResumedFrom != "":
		return fmt.Sprintf("resumed from %s (%d datasets restored from the file)", l.ResumedFrom, l.Restored)
	case l.Subscribed:
		return "subscribed to runtime 1 (snapshot of the view, then changes)"
	}
	return NA
}

// medianMax is the median (the upper one of an even count) and the largest; zero
// for none.
func medianMax(ds []time.Duration) (time.Duration, time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	return sorted[len(sorted)/2], sorted[len(sorted)-1]
}

// medianOf is the median (the upper one of an even count); 0 for none.
func medianOf(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	sorted := slices.Clone(vs)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

func copyRate(copies []CopyTiming, orders int64) float64 {
	for _, c := range copies {
		if c.Orders == orders && c.Took > 0 {
			return float64(c.Orders) / c.Took.Seconds()
		}
	}
	return 0
}

// RestartGoal is the verdict on the mode: file goal at one size.
type RestartGoal struct {
	Orders int64
	Status string // "ok", "MISS", or NA when mode: file was not measured
	Got    string
}

// RestartGoals checks "mode: file ready within RestartFileGoal" at each size,
// over its restarts (stop and kill; not the first start, which takes a snapshot).
func RestartGoals(sums []RestartSummary) []RestartGoal {
	var out []RestartGoal
	for _, s := range sums {
		if s.Target != RestartFile || s.Kind == RestartFirst {
			continue
		}
		g := RestartGoal{Orders: s.Orders, Status: "ok"}
		if i := slices.IndexFunc(out, func(g RestartGoal) bool { return g.Orders == s.Orders }); i >= 0 {
			g = out[i]
			out = slices.Delete(out, i, i+1)
		}
		switch {
		case s.Failed > 0 || s.Runs == 0:
			g.Status = "MISS"
		case s.ReadyMax > RestartFileGoal:
			g.Status = "MISS"
		}
		if g.Got != "" {
			g.Got += ", "
		}
		g.Got += fmt.Sprintf("%s: worst %s s of %d", s.Kind, seconds(s.ReadyMax), s.Runs-s.Failed)
		if s.Failed > 0 {
			g.Got += fmt.Sprintf(" (%d failed)", s.Failed)
		}
		out = append(out, g)
	}
	return out
}

// RestartMarkdown renders the run: the table per size, the goal, the notes.
func RestartMarkdown(rep *RestartReport) string {
	sums := SummarizeRestarts(rep.Results, rep.Copies)
	return render("restart-report", struct {
		*RestartReport
		Sums  []RestartSummary
		Goals []RestartGoal
	}{rep, sums, RestartGoals(sums)})
}

func init() {
	maps.Copy(funcs, template.FuncMap{"target": targetTitle, "runs": runsText, "pair": pairText, "caught": caughtText,
		"rss": rssText, "rate": rateText, "copyRate": func(c CopyTiming) string { return rateText(float64(c.Orders) / c.Took.Seconds()) },
		"goalLimit": func() string { return seconds(RestartFileGoal) }})
}

func targetTitle(t string) string {
	switch t {
	case RestartMemory:
		return "1, mode: memory"
	case RestartFile:
		return "1, mode: file"
	case RestartMaterialized:
		return "2 (materialized)"
	}
	return t
}

func runsText(s RestartSummary) string {
	if s.Failed > 0 {
		return fmt.Sprintf("%d (%d failed)", s.Runs, s.Failed)
	}
	return fmt.Sprint(s.Runs)
}

func pairText(med, worst time.Duration) string {
	if med <= 0 {
		return NA
	}
	return fmt.Sprintf("%s (%s)", seconds(med), seconds(worst))
}

func caughtText(s RestartSummary) string {
	t := pairText(s.CaughtUpMedian, s.CaughtUpMax)
	if s.NotCaughtUp > 0 {
		t += fmt.Sprintf(", %d not in time", s.NotCaughtUp)
	}
	return t
}

func rssText(b int64) string {
	if b <= 0 {
		return NA
	}
	return bytesText(b)
}

func rateText(r float64) string {
	if r <= 0 {
		return NA
	}
	return count(int64(r))
}

// resultLine is one restart in a progress line.
func resultLine(r RestartResult) string {
	if r.Err != "" {
		return "failed: " + r.Err
	}
	line := fmt.Sprintf("ready %ss, caught up %ss, peak RSS %s, %s", seconds(r.Ready), seconds(r.CaughtUp), rssText(r.PeakRSS), startPath(r.Log))
	if r.CopyTook > 0 {
		line += fmt.Sprintf("; COPY just before: %ss", seconds(r.CopyTook))
	}
	if r.Log.Reconnects > 0 {
		line += fmt.Sprintf("; %d reconnects, first: %s", r.Log.Reconnects, r.Log.FirstError)
	}
	return line
}
