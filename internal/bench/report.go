package bench

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// The API's paths that the benchmark reads.
const (
	PathNoop         = "/noop"
	PathRanking      = "/ranking"
	PathAccelerated  = "/ranking-accelerated"
	PathMaterialized = "/ranking-materialized"
)

// Hops of the freshness measurement.
const (
	HopPostgres            = "postgres"
	HopAccelerated         = "accelerated"
	HopMaterialized        = "materialized"
	HopAcceleratedRuntime  = "accelerated runtime"
	HopMaterializedRuntime = "materialized runtime"
)

// Phases of a run in which freshness is measured.
const (
	PhaseIdle = "idle"       // writes and their freshness reads only
	PhaseLoad = "under load" // during the throughput rounds
)

// Scenarios returns the scenarios of a run, the ceiling and the baseline first.
func Scenarios() []Target {
	return []Target{
		{Name: "/noop (ceiling)", Path: PathNoop},
		{Name: "/ranking (Postgres)", Path: PathRanking},
		{Name: "/ranking-accelerated (cache on)", Path: PathAccelerated},
		{Name: "/ranking-accelerated (cache off)", Path: PathAccelerated, NoCache: true},
		{Name: "/ranking-materialized (cache on)", Path: PathMaterialized},
		{Name: "/ranking-materialized (cache off)", Path: PathMaterialized, NoCache: true},
	}
}

// Report is the result of a whole run.
type Report struct {
	Started  time.Time    `json:"started"`
	Command  string       `json:"command"`
	Settings Settings     `json:"settings"`
	Machine  Machine      `json:"machine"`
	Sizes    []SizeResult `json:"sizes"`
	Notes    []string     `json:"notes,omitempty"`
}

// Settings are the knobs of a run that its numbers depend on.
type Settings struct {
	BaseURL      string        `json:"base_url"`
	Quick        bool          `json:"quick"`
	Requests     int           `json:"requests"`    // per scenario, closed loop; 0 when by Duration
	Duration     time.Duration `json:"duration_ns"` // per scenario, closed loop, when Requests is 0
	Concurrency  int           `json:"concurrency"`
	Rounds       int           `json:"rounds"`
	Warmup       time.Duration `json:"warmup_ns"` // per scenario
	Rates        []float64     `json:"rates,omitempty"`
	OpenDuration time.Duration `json:"open_duration_ns"` // per scenario and rate
	MaxInFlight  int           `json:"max_in_flight"`    // open loop
	WriteRate    float64       `json:"write_rate"`
	// FreshnessConcurrency bounds each hop's freshness reads in flight.
	FreshnessConcurrency int `json:"freshness_concurrency"`
	// FreshnessSample: every n-th write is traced through the hops.
	FreshnessSample int           `json:"freshness_sample"`
	FreshnessWindow time.Duration `json:"freshness_window_ns"`
	// ChangesWindow is the window of writes only that CPU per change is taken over.
	ChangesWindow time.Duration `json:"changes_window_ns,omitempty"`
}

// SizeResult is the measurement at one data size.
type SizeResult struct {
	Orders int64 `json:"orders"` // orders in the table when measuring began
	// Seeded orders were added in SeedTime; SyncTime is how long both runtimes
	// then took to reflect them (and a write after them).
	Seeded    int64            `json:"seeded,omitempty"`
	SeedTime  time.Duration    `json:"seed_ns,omitempty"`
	SyncTime  time.Duration    `json:"sync_ns,omitempty"`
	Closed    []ScenarioResult `json:"closed"`
	Open      []OpenResult     `json:"open,omitempty"`
	Freshness []Freshness      `json:"freshness,omitempty"`
	Writer    Summary          `json:"writer"`
	Memory    []Memory         `json:"memory,omitempty"`
	// Changes is the CPU per applied change, from a window of writes only.
	Changes *ChangeCost `json:"changes,omitempty"`
	// Watermarks are the write-to-visible lags from the runtimes' own
	// watermarks during the freshness window (Phase PhaseIdle).
	Watermarks []Freshness `json:"watermarks,omitempty"`
	Notes      []string    `json:"notes,omitempty"`
}

// ChangeCost is the CPU each process spent per write over a window with
// writes only (no reads): per change applied, for the runtimes.
type ChangeCost struct {
	Duration time.Duration `json:"duration_ns"`
	Writes   int64         `json:"writes"` // acknowledged in the window
	CPU      []ProcessCPU  `json:"cpu"`
}

// OpenResult is one open-loop rate.
type OpenResult struct {
	Rate    float64          `json:"rate"`
	Results []ScenarioResult `json:"results"`
}

// ScenarioResult is one scenario's statistics and how it compares.
type ScenarioResult struct {
	Target    Target  `json:"target"`
	Summary   Summary `json:"summary"`
	VsRanking float64 `json:"vs_ranking"` // 2xx req/s over /ranking's; 0 when unknown
	OfCeiling float64 `json:"of_ceiling"` // 2xx req/s over /noop's, about [0, 1]; 0 when unknown
	// CPU is each process's CPU per request over the scenario's measured slices.
	CPU []ProcessCPU `json:"cpu,omitempty"`
}

// Ratios sets each result's 2xx req/s relative to /ranking's and to the /noop
// ceiling's. A ratio whose reference is missing or answered no 2xx stays 0, as
// does the ratio of a result without 2xx answers.
func Ratios(rs []ScenarioResult) {
	base, ceiling := find(rs, PathRanking, false), find(rs, PathNoop, false)
	for i := range rs {
		rps := rs[i].Summary.GoodRPS()
		rs[i].VsRanking, rs[i].OfCeiling = 0, 0
		if base != nil && base.Summary.GoodRPS() > 0 {
			rs[i].VsRanking = rps / base.Summary.GoodRPS()
		}
		if ceiling != nil && ceiling.Summary.GoodRPS() > 0 {
			rs[i].OfCeiling = rps / ceiling.Summary.GoodRPS()
		}
	}
}

func find(rs []ScenarioResult, path string, noCache bool) *ScenarioResult {
	for i := range rs {
		if rs[i].Target.Path == path && rs[i].Target.NoCache == noCache {
			return &rs[i]
		}
	}
	return nil
}

func findFreshness(fs []Freshness, hop, phase string) *Freshness {
	for i := range fs {
		if fs[i].Hop == hop && fs[i].Phase == phase {
			return &fs[i]
		}
	}
	return nil
}

// Goal outcomes.
const (
	Pass = "PASS"
	Miss = "MISS"
	NA   = "n/a"
)

// Goal is one goal with what a run measured.
type Goal struct {
	Goal   string `json:"goal"`
	Got    string `json:"got"`
	Status string `json:"status"` // Pass, Miss or NA
}

// Goals checks the read path's goals against one size's measurement. conc is
// the closed loop's connection count (the p99 goal is stated at 100). They are
// stated for 100k orders at 100 writes/s on 2 cores; other settings are
// reported all the same.
func Goals(s SizeResult, conc int) []Goal {
	mat := find(s.Closed, PathMaterialized, false)
	accOff := find(s.Closed, PathAccelerated, true)
	var goals []Goal
	// ratio adds a goal on r's req/s: got is the ratio or 0 when unknown.
	ratio := func(name string, r *ScenarioResult, got func(*ScenarioResult) float64, want float64, text func(float64) string) {
		g := Goal{Goal: name, Status: NA, Got: "not measured"}
		switch {
		case r == nil || r.Summary.Requests == 0:
		case r.Summary.OK == 0:
			g.Got, g.Status = "no 2xx answers", Miss
		case got(r) == 0:
			g.Got = "the reference answered no 2xx"
		default:
			g.Got, g.Status = text(got(r)), status(got(r) >= want)
		}
		goals = append(goals, g)
	}
	vs := func(r *ScenarioResult) float64 { return r.VsRanking }
	times := func(v float64) string { return fmt.Sprintf("%.1fx", v) }
	ratio("/ranking-materialized 2xx req/s >= 20x /ranking", mat, vs, 20, times)
	ratio("/ranking-materialized 2xx req/s >= 25% of /noop", mat, func(r *ScenarioResult) float64 { return r.OfCeiling }, 0.25,
		func(v float64) string { return fmt.Sprintf("%.1f%%", v*100) })
	ratio("/ranking-accelerated (cache off) 2xx req/s >= 5x /ranking", accOff, vs, 5, times)

	p99 := Goal{Goal: "/ranking-materialized p99 < 10 ms at 100 connections", Status: NA, Got: "not measured"}
	switch {
	case mat == nil || mat.Summary.Requests == 0:
	case mat.Summary.OK == 0:
		p99.Got, p99.Status = "no 2xx answers", Miss
	default:
		p99.Got = fmtMS(mat.Summary.P99) + " ms at " + fmt.Sprint(conc) + " connections"
		p99.Status = status(mat.Summary.P99 < 10*time.Millisecond)
	}
	goals = append(goals, p99, non2xxGoal(s))
	goals = append(goals, lagGoal(s, HopAccelerated, "write-to-visible p99 < 100 ms, accelerated hop", 100*time.Millisecond))
	goals = append(goals, lagGoal(s, HopMaterialized, "write-to-visible p99 < 250 ms, end to end (materialized)", 250*time.Millisecond))
	return append(goals, scaleGoals(s)...)
}

// scaleGoals are the goals of CPU per materialized read, materialized
// throughput against /noop, and freshness from the runtimes' watermarks.
func scaleGoals(s SizeResult) []Goal {
	mat := find(s.Closed, PathMaterialized, false)
	cpu := Goal{Goal: "CPU per materialized read (api + runtime 2) <= 80 us", Status: NA, Got: "not measured"}
	if mat != nil {
		if v, net, hasNet, ok := ReadCPU(mat.CPU); ok {
			cpu.Got = fmt.Sprintf("%.0f us%s (api %s, runtime 2 %s)", v, netText(net, hasNet), cpuText(cpuOf(mat.CPU, ProcAPI)), cpuText(cpuOf(mat.CPU, ProcMaterialized)))
			cpu.Status = status(v <= 80)
		}
	}
	ceil := Goal{Goal: "/ranking-materialized 2xx req/s >= 50% of /noop", Status: NA, Got: "not measured"}
	if mat != nil && mat.OfCeiling > 0 {
		ceil.Got, ceil.Status = fmt.Sprintf("%.1f%%", mat.OfCeiling*100), status(mat.OfCeiling >= 0.5)
	}
	goals := []Goal{cpu, ceil,
		watermarkGoal(s, HopWatermarkAccelerated, "write to visible (watermark) p99 <= 50 ms at runtime 1", 50*time.Millisecond),
		watermarkGoal(s, HopWatermarkMaterialized, "write to visible (watermark) p99 <= 100 ms end to end (runtime 2)", 100*time.Millisecond),
	}
	return goals
}

// netText gives a gross CPU figure's net counterpart, when known.
func netText(net float64, hasNet bool) string {
	if hasNet {
		return fmt.Sprintf(" (net of the background: %.0f us)", net)
	}
	return ""
}

func watermarkGoal(s SizeResult, hop, name string, limit time.Duration) Goal {
	g := Goal{Goal: name, Status: NA, Got: "not measured"}
	f := findFreshness(s.Watermarks, hop, PhaseIdle)
	if f == nil || f.Writes == 0 {
		return g
	}
	g.Got = fmt.Sprintf("p99 %s ms of %d writes", fmtMS(f.P99), f.Writes)
	if f.Unreached > 0 {
		g.Got += fmt.Sprintf(", %d not covered", f.Unreached)
	}
	g.Status = status(f.Reached > 0 && f.Unreached == 0 && f.P99 <= limit)
	return g
}

func non2xxGoal(s SizeResult) Goal {
	g := Goal{Goal: "zero non-2xx on every path", Status: NA, Got: "not measured"}
	if len(s.Closed) == 0 {
		return g
	}
	var bad []string
	add := func(rs []ScenarioResult, suffix string) {
		for _, r := range rs {
			if n := r.Summary.Non2xx(); n > 0 {
				bad = append(bad, fmt.Sprintf("%s%s: %d (%s)", r.Target.Name, suffix, n, statusList(r.Summary)))
			}
		}
	}
	add(s.Closed, "")
	for _, o := range s.Open {
		add(o.Results, fmt.Sprintf(" at %g/s", o.Rate))
	}
	if len(bad) == 0 {
		g.Got, g.Status = "0", Pass
		return g
	}
	g.Got, g.Status = strings.Join(bad, "; "), Miss
	return g
}

func lagGoal(s SizeResult, hop, name string, limit time.Duration) Goal {
	g := Goal{Goal: name, Status: NA, Got: "not measured (no writes)"}
	f := findFreshness(s.Freshness, hop, PhaseLoad)
	if f == nil || f.Writes == 0 {
		return g
	}
	if f.Reached == 0 {
		g.Got, g.Status = fmt.Sprintf("none of %d writes seen under load", f.Writes), Miss
		return g
	}
	g.Got = fmt.Sprintf("p99 %s ms under load", fmtMS(f.P99))
	if idle := findFreshness(s.Freshness, hop, PhaseIdle); idle != nil && idle.Reached > 0 {
		g.Got += fmt.Sprintf(" (idle: %s ms)", fmtMS(idle.P99))
	}
	if f.Violations > 0 {
		g.Got += fmt.Sprintf(", READ-YOUR-WRITES VIOLATED by %d answers", f.Violations)
	}
	if n := f.Unreached - f.Violations; n > 0 {
		g.Got += fmt.Sprintf(", %d of %d writes not seen (%s)", n, f.Writes, reasonList(f.NotSeen))
	}
	g.Status = status(f.Reached > 0 && f.Unreached == 0 && f.P99 < limit)
	return g
}

func status(ok bool) string {
	if ok {
		return Pass
	}
	return Miss
}

// statusList formats a status-code distribution, errors included: "200×19953,
// 500×47, timeout×2".
func statusList(s Summary) string {
	var parts []string
	codes := make([]int, 0, len(s.StatusCodes))
	for c := range s.StatusCodes {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d×%d", c, s.StatusCodes[c]))
	}
	errs := make([]string, 0, len(s.Errors))
	for e := range s.Errors {
		errs = append(errs, e)
	}
	sort.Strings(errs)
	for _, e := range errs {
		parts = append(parts, fmt.Sprintf("%s×%d", e, s.Errors[e]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// fmtMS formats a duration in milliseconds with two decimals.
func fmtMS(d time.Duration) string {
	return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond))
}

// lagText formats a freshness percentile: "-" when no write was seen.
func lagText(f Freshness, d time.Duration) string {
	if f.Reached == 0 {
		return "-"
	}
	return fmtMS(d)
}

// reasonList formats why writes were not seen: "status 504×3, timeout×1".
func reasonList(rs []Reason) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%s×%d", r.Why, r.Count)
	}
	return strings.Join(parts, ", ")
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
