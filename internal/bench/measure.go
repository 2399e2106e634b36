package bench

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/wire"
)

// watermarkGrace bounds the wait, after the freshness window, for the
// watermark reads still in flight; the runtimes answer them within about 10 s.
const watermarkGrace = 12 * time.Second

// runtimeQuery is what the freshness reads ask a runtime's HTTP API directly: the
// ranking, whose answer carries the position of the data it reflects.
const runtimeQuery = "SELECT name, count FROM rankings"

// probeList returns the hops to watch: the api's three ranking paths, and the
// runtimes' own HTTP APIs when given.
func (r *Runner) probeList() []Probe {
	probes := []Probe{
		{Hop: HopPostgres, URL: r.BaseURL + PathRanking},
		{Hop: HopAccelerated, URL: r.BaseURL + PathAccelerated},
		{Hop: HopMaterialized, URL: r.BaseURL + PathMaterialized},
	}
	for _, rt := range []struct{ hop, base string }{
		{HopAcceleratedRuntime, r.AcceleratedHTTP}, {HopMaterializedRuntime, r.MaterializedHTTP},
	} {
		if rt.base != "" {
			probes = append(probes, Probe{Hop: rt.hop, Method: http.MethodPost, URL: strings.TrimRight(rt.base, "/") + "/v1/sql", Body: runtimeQuery})
		}
	}
	return probes
}

// measure runs one size's phases under the writer: warm-up, freshness window,
// closed-loop rounds, open-loop rounds, grace. From the freshness window on, each
// write is read once per hop (Watch).
func (r *Runner) measure(ctx context.Context, res *SizeResult) error {
	probes := r.probeList()
	writer := NewWriter(r.writes, r.WriteRate, r.epoch)
	watch := NewWatch(r.probes, probes, r.epoch)
	watch.Concurrency = r.FreshnessConcurrency
	watch.Sample = r.FreshnessSample
	// The watermark hops are read during the freshness window only: their reads
	// would count in the CPU per request of the rounds.
	wm := NewWatch(r.probes, watermarkProbes(r.AcceleratedRuntime, r.MaterializedRuntime), r.epoch)
	wm.Concurrency, wm.Sample = r.FreshnessConcurrency, r.WatermarkSample
	writer.OnWrite = func(w Write) { watch.Read(w); wm.Read(w) }
	writer.Open()
	defer writer.Close()
	defer watch.Close(ctx) // at once when ctx ended; a no-op after the grace below

	scen := Scenarios()
	if r.Warmup > 0 {
		r.printf("warm-up: %s per scenario\n", r.Warmup)
		for _, t := range scen {
			r.load.Closed(ctx, t, r.Concurrency, 0, r.Warmup, NewRecorder())
		}
	}
	if r.ChangesWindow > 0 && r.WriteRate > 0 {
		res.Changes = r.changesWindow(ctx, writer)
	}
	// Open before taking idleFrom: every write of the phases is then read.
	watch.Open()
	idleFrom := time.Since(r.epoch)
	if r.FreshnessWindow > 0 {
		watermarks := len(wm.probes) > 0 && r.WriteRate > 0
		if watermarks {
			wm.Open()
		}
		r.printf("freshness: %s of writes at %g/s, every %d. read once per hop, no other read load", r.FreshnessWindow, r.WriteRate, r.FreshnessSample)
		if watermarks {
			r.printf("; every %d. write on the runtimes' watermarks", r.WatermarkSample)
		}
		r.printf("\n")
		sleepUntil(ctx, time.Now().Add(r.FreshnessWindow))
		if watermarks {
			res.Watermarks = r.watermarks(ctx, wm, idleFrom, time.Since(r.epoch))
		}
	}
	loadFrom := time.Since(r.epoch)
	res.Closed = r.closedRounds(ctx, scen, BackgroundOf(res.Changes))
	for _, rate := range r.Rates {
		res.Open = append(res.Open, OpenResult{Rate: rate, Results: r.openRounds(ctx, scen, rate)})
	}
	loadTo := time.Since(r.epoch)
	if err := ctx.Err(); err != nil {
		return err
	}
	writer.Close()
	// Grace: the last writes' reads get their answers, seen or not.
	gctx, cancel := context.WithTimeout(ctx, r.Grace)
	watch.Close(gctx)
	cancel()

	res.Writer = writer.Summary()
	res.Freshness = r.freshness(probes, watch.Traced(), watch.Answers(), idleFrom, loadFrom, loadTo)
	res.Notes = append(res.Notes, freshnessNotes(res.Freshness, watch.Concurrency)...)
	res.Notes = append(res.Notes, cacheNotes(res.Closed)...)
	for _, src := range r.Memory {
		res.Memory = append(res.Memory, ReadMemory(ctx, r.probes.HTTP, r.Docker, src))
	}
	return ctx.Err()
}

// closedRounds runs the closed loop: every scenario once per round, in the order
// of Order, each round's slice of the scenario's requests (or time).
// Each scenario's CPU per request is also given net of bg, the background CPU
// (writes, no reads) of the changes window.
func (r *Runner) closedRounds(ctx context.Context, scen []Target, bg Background) []ScenarioResult {
	recs := make([]*Recorder, len(scen))
	for i := range recs {
		recs[i] = NewRecorder()
	}
	usage, wall := make([]CPUUsage, len(scen)), make([]time.Duration, len(scen))
	counts := Split(r.Requests, r.Rounds)
	times := SplitDuration(r.Duration, r.Rounds)
	for i, turn := range Order(len(scen), r.Rounds) {
		if i%len(scen) == 0 {
			r.printf("closed loop: round %d/%d\n", turn.Round+1, r.Rounds)
		}
		n, d := counts[turn.Round], time.Duration(0)
		if r.Duration > 0 {
			n, d = 0, times[turn.Round]
		}
		if n == 0 && d == 0 {
			continue
		}
		before, start := r.cpu.Read(ctx), time.Now()
		r.load.Closed(ctx, scen[turn.Scenario], r.Concurrency, n, d, recs[turn.Scenario])
		wall[turn.Scenario] += time.Since(start)
		usage[turn.Scenario].Add(before, r.cpu.Read(ctx))
	}
	out := results(scen, recs)
	if len(r.CPU) > 0 {
		for i := range out {
			out[i].CPU = PerOp(usage[i], out[i].Summary.Requests, Processes(r.CPU))
			SubtractBackground(out[i].CPU, bg, wall[i], out[i].Summary.Requests)
		}
	}
	return out
}

// changesWindow lets the writer write with no reads and no polling for
// ChangesWindow and returns each process's CPU per write acknowledged in it.
func (r *Runner) changesWindow(ctx context.Context, writer *Writer) *ChangeCost {
	r.printf("changes: %s of writes at %g/s only (no reads): CPU per change\n", r.ChangesWindow, r.WriteRate)
	c0 := r.changeCounters(ctx)
	before, from := r.cpu.Read(ctx), time.Since(r.epoch)
	sleepUntil(ctx, time.Now().Add(r.ChangesWindow))
	after, to := r.cpu.Read(ctx), time.Since(r.epoch)
	c1 := r.changeCounters(ctx)
	var u CPUUsage
	u.Add(before, after)
	n := int64(len(Between(writer.Writes(), from, to)))
	c := &ChangeCost{Duration: to - from, Writes: n, CPU: PerOp(u, n, Processes(r.CPU))}
	if c0 != nil && c1 != nil {
		c.Counted = true
		c.Queries, c.QueryMillis = int64(c1[1]-c0[1]), c1[0]-c0[0]
		c.Refreshes, c.RefreshMillis = int64(c1[3]-c0[3]), c1[2]-c0[2]
	}
	return c
}

// changeCounters reads runtime 1's query time and count and runtime 2's
// refresh time and count of rankings; nil when either cannot be read.
func (r *Runner) changeCounters(ctx context.Context) []float64 {
	var acc, mat string
	for _, s := range r.CPU {
		switch s.Process {
		case ProcAccelerated:
			acc = s.MetricsURL
		case ProcMaterialized:
			mat = s.MetricsURL
		}
	}
	if acc == "" || mat == "" {
		return nil
	}
	a, err := scrape(ctx, r.polls, acc, MetricKey{Name: "query_duration_ms_sum"}, MetricKey{Name: "query_duration_ms_count"})
	if err != nil {
		return nil
	}
	m, err := scrape(ctx, r.polls, mat,
		MetricKey{Name: "dataset_acceleration_refresh_duration_ms_sum", Label: "dataset", Value: "rankings"},
		MetricKey{Name: "dataset_acceleration_refresh_duration_ms_count", Label: "dataset", Value: "rankings"})
	if err != nil {
		return nil
	}
	return append(a, m...)
}

// watermarks stops the watermark reads, letting those in flight finish for up
// to watermarkGrace, and returns the lags of the writes acknowledged in [from, to).
func (r *Runner) watermarks(ctx context.Context, wm *Watch, from, to time.Duration) []Freshness {
	gctx, cancel := context.WithTimeout(ctx, watermarkGrace)
	wm.Close(gctx)
	cancel()
	hops := make([]string, len(wm.probes))
	for i, p := range wm.probes {
		hops[i] = p.Hop
	}
	var out []Freshness
	for _, h := range Match(hops, Between(wm.Traced(), from, to), wm.Answers()) {
		out = append(out, Summarize(h, PhaseIdle))
	}
	return out
}

// openRounds runs the open loop at rate, interleaved as the closed loop.
func (r *Runner) openRounds(ctx context.Context, scen []Target, rate float64) []ScenarioResult {
	recs := make([]*Recorder, len(scen))
	for i := range recs {
		recs[i] = NewRecorder()
	}
	times := SplitDuration(r.OpenDuration, r.Rounds)
	for i, turn := range Order(len(scen), r.Rounds) {
		if i%len(scen) == 0 {
			r.printf("open loop at %g req/s: round %d/%d\n", rate, turn.Round+1, r.Rounds)
		}
		r.load.Open(ctx, scen[turn.Scenario], rate, times[turn.Round], r.MaxInFlight, recs[turn.Scenario])
	}
	return results(scen, recs)
}

func results(scen []Target, recs []*Recorder) []ScenarioResult {
	out := make([]ScenarioResult, len(scen))
	for i, t := range scen {
		out[i] = ScenarioResult{Target: t, Summary: recs[i].Summary()}
	}
	Ratios(out)
	return out
}

// freshness matches the writes of each phase with their reads' answers.
func (r *Runner) freshness(probes []Probe, writes []Write, answers []Answer, idleFrom, loadFrom, loadTo time.Duration) []Freshness {
	if len(writes) == 0 {
		return nil
	}
	hops := make([]string, len(probes))
	for i, p := range probes {
		hops[i] = p.Hop
	}
	var out []Freshness
	phases := []struct {
		name     string
		from, to time.Duration
	}{{PhaseIdle, idleFrom, loadFrom}, {PhaseLoad, loadFrom, loadTo}}
	for _, ph := range phases {
		in := Between(writes, ph.from, ph.to)
		if len(in) == 0 {
			continue
		}
		for _, h := range Match(hops, in, answers) {
			out = append(out, Summarize(h, ph.name))
		}
	}
	return out
}

// freshnessNotes reports read-your-writes violations, loudly, and reads whose lag
// includes a wait for a free slot.
func freshnessNotes(fs []Freshness, conc int) []string {
	var notes []string
	for _, f := range fs {
		if f.Violations > 0 {
			notes = append(notes, fmt.Sprintf("**READ-YOUR-WRITES VIOLATED**: %s (%s) answered %d of %d reads at a position below their Spice-Min-Position (first: %s). This is a correctness bug of that hop, not of the benchmark.",
				f.Hop, f.Phase, f.Violations, f.Writes, f.Violation))
		}
	}
	for _, f := range fs {
		if f.Queued > 0 {
			notes = append(notes, fmt.Sprintf("freshness: %d of %d reads of %s (%s) waited for one of the %d slots per hop (--freshness-concurrency); their lags include that wait",
				f.Queued, f.Reached, f.Hop, f.Phase, conc))
		}
	}
	return notes
}

// cacheNotes flags a cache-off scenario that was served from the cache: the api
// did not pass Cache-Control: no-cache on to the runtime.
func cacheNotes(rs []ScenarioResult) []string {
	var notes []string
	for _, r := range rs {
		if hits := r.Summary.Cache[wire.CacheHit]; r.Target.NoCache && hits > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d answers were cache HITs; the api must pass Cache-Control: no-cache on to the runtime", r.Target.Name, hits))
		}
	}
	return notes
}

// printSize prints a size's main table as it finishes.
func (r *Runner) printSize(s SizeResult) {
	r.printf("\n%-36s %8s %10s %9s %9s %9s %9s %8s\n", "scenario", "success", "req/s", "p50 ms", "p99 ms", "p99.9 ms", "vs /rank", "of noop")
	for _, c := range s.Closed {
		m := c.Summary
		r.printf("%-36s %8s %10.1f %9s %9s %9s %9s %8s\n", c.Target.Name, pct(m.SuccessRate()), m.RPS(),
			fmtMS(m.P50), fmtMS(m.P99), fmtMS(m.P999), ratioText(c.VsRanking), pctOrNA(c.OfCeiling))
	}
	if len(r.CPU) > 0 {
		r.printf("\n%-36s", "CPU per request (us): gross (net)")
		for _, p := range Processes(r.CPU) {
			r.printf(" %14s", p)
		}
		r.printf("\n")
		for _, c := range s.Closed {
			r.printf("%-36s", c.Target.Name)
			for _, p := range Processes(r.CPU) {
				r.printf(" %14s", cpuText(cpuOf(c.CPU, p)))
			}
			r.printf("\n")
		}
	}
	if mat := find(s.Closed, PathMaterialized, false); mat != nil {
		r.printf("/ranking-materialized (cache on): %s of /noop (goal >= 50%%)", pctOrNA(mat.OfCeiling))
		if v, net, hasNet, ok := ReadCPU(mat.CPU); ok {
			r.printf("; CPU per materialized read (api + runtime 2): %.0f us%s (goal <= 80 us)", v, netText(net, hasNet))
		}
		r.printf("\n")
	}
	if c := s.Changes; c != nil {
		r.printf("CPU per change (us), %d writes in %.1fs without reads:", c.Writes, c.Duration.Seconds())
		for _, p := range c.CPU {
			r.printf(" %s %s;", p.Process, cpuText(&p))
		}
		r.printf("\n")
		if c.Counted {
			r.printf("  meanwhile: %s\n", changeCounts(*c))
		}
	}
	for _, f := range s.Watermarks {
		r.printf("freshness %-30s writes %5d seen %5d p50 %8s ms p99 %8s ms max %8s ms%s\n",
			f.Hop, f.Writes, f.Reached, lagText(f, f.P50), lagText(f, f.P99), lagText(f, f.Max), unseenText(f))
	}
	for _, f := range s.Freshness {
		r.printf("freshness %-22s %-10s writes %5d seen %5d p50 %8s ms p99 %8s ms max %8s ms%s\n",
			f.Hop, f.Phase, f.Writes, f.Reached, lagText(f, f.P50), lagText(f, f.P99), lagText(f, f.Max), unseenText(f))
		if f.Violations > 0 {
			r.printf("READ-YOUR-WRITES VIOLATED on %s: %d answers below their Spice-Min-Position (first: %s)\n", f.Hop, f.Violations, f.Violation)
		}
	}
	r.printf("\n")
}
