package bench

import (
	"cmp"
	"fmt"
	"slices"
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
	var out []RestartSummary
	for _, r := range results {
		i := slices.IndexFunc(out, func(s RestartSummary) bool { return s.Orders == r.Orders && s.Target == r.Target && s.Kind == r.Kind })
		if i < 0 {
			out, i = append(out, RestartSummary{Orders: r.Orders, Target: r.Target, Kind: r.Kind}), len(out)
		}
		out[i].Runs++
	}
	for i := range out {
		s := &out[i]
		group := slices.DeleteFunc(slices.Clone(results), func(r RestartResult) bool {
			return r.Orders != s.Orders || r.Target != s.Target || r.Kind != s.Kind
		})
		summarize(s, group)
		if c := slices.IndexFunc(copies, func(c CopyTiming) bool { return c.Orders == s.Orders && c.Took > 0 }); c >= 0 {
			s.CopyRate = float64(copies[c].Orders) / copies[c].Took.Seconds()
		}
		if s.VsCopy == 0 && s.SnapshotRate > 0 && s.CopyRate > 0 {
			s.VsCopy = s.SnapshotRate / s.CopyRate
		}
	}
	return out
}

func summarize(s *RestartSummary, rs []RestartResult) {
	var ready, first, listen, caught []time.Duration
	var rates, ratios []float64
	for _, r := range rs {
		if r.Err != "" {
			s.Failed++
			continue
		}
		ready = append(ready, r.Ready)
		first, listen = appendPositive(first, r.FirstLog), appendPositive(listen, r.Listening)
		if caught = appendPositive(caught, r.CaughtUp); r.CaughtUp <= 0 {
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
		s.Path, s.Reconnects, s.FirstError = startPath(r.Log), s.Reconnects+r.Log.Reconnects, cmp.Or(s.FirstError, r.Log.FirstError)
	}
	s.ReadyMedian, s.ReadyMax = medianMax(ready)
	s.FirstLogMedian, _ = medianMax(first)
	s.ListenMedian, _ = medianMax(listen)
	s.CaughtUpMedian, s.CaughtUpMax = medianMax(caught)
	s.SnapshotRate, _ = medianMax(rates)
	s.VsCopy, _ = medianMax(ratios)
}

func appendPositive(ds []time.Duration, d time.Duration) []time.Duration {
	if d > 0 {
		return append(ds, d)
	}
	return ds
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

// medianMax is the median (the upper one of an even count) and the largest;
// zero for none.
func medianMax[T cmp.Ordered](xs []T) (med, top T) {
	if len(xs) == 0 {
		return med, top
	}
	sorted := slices.Sorted(slices.Values(xs))
	return sorted[len(sorted)/2], sorted[len(sorted)-1]
}

// RestartGoal is the verdict on the mode: file goal at one size.
type RestartGoal struct {
	Orders int64
	Status string // "ok" or "MISS"
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
		i := slices.IndexFunc(out, func(g RestartGoal) bool { return g.Orders == s.Orders })
		if i < 0 {
			out, i = append(out, RestartGoal{Orders: s.Orders, Status: "ok"}), len(out)
		}
		g := &out[i]
		if s.Failed > 0 || s.Runs == 0 || s.ReadyMax > RestartFileGoal {
			g.Status = "MISS"
		}
		if g.Got != "" {
			g.Got += ", "
		}
		g.Got += fmt.Sprintf("%s: worst %s s of %d", s.Kind, seconds(s.ReadyMax), s.Runs-s.Failed)
		if s.Failed > 0 {
			g.Got += fmt.Sprintf(" (%d failed)", s.Failed)
		}
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
		Limit time.Duration
	}{rep, sums, RestartGoals(sums), RestartFileGoal})
}

// restartTargets are the targets' titles in the report.
var restartTargets = map[string]string{RestartMemory: "1, mode: memory", RestartFile: "1, mode: file", RestartMaterialized: "2 (materialized)"}

func pairText(med, worst time.Duration) string {
	return orNA(med > 0, fmt.Sprintf("%s (%s)", seconds(med), seconds(worst)))
}
