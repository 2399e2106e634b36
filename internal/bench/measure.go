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
	var bg Background
	if res.Changes != nil {
		bg = BackgroundOf(res.Changes.CPU, res.Changes.Duration)
	}
	res.Closed = r.closedRounds(ctx, scen, bg)
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
	for _, m := range r.meter.Memory(ctx) {
		if m.Process == ProcAccelerated || m.Process == ProcMaterialized {
			res.Memory = append(res.Memory, m)
		}
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
		before, start := r.meter.CPU(ctx), time.Now()
		r.load.Closed(ctx, scen[turn.Scenario], r.Concurrency, n, d, recs[turn.Scenario])
		wall[turn.Scenario] += time.Since(start)
		usage[turn.Scenario].Add(before, r.meter.CPU(ctx))
	}
	out := results(scen, recs)
	if len(r.Processes) > 0 {
		for i := range out {
			out[i].CPU = PerOp(usage[i], out[i].Summary.Requests, Names(r.Processes))
			SubtractBackground(out[i].CPU, bg, wall[i], out[i].Summary.Requests)
		}
	}
	return out
}

// changesWindow lets the writer write with no reads for ChangesWindow and
// returns each process's CPU per write acknowledged in it.
func (r *Runner) changesWindow(ctx context.Context, writer *Writer) *ChangeCost {
	r.printf("changes: %s of writes at %g/s only (no reads): CPU per change\n", r.ChangesWindow, r.WriteRate)
	before, from := r.meter.CPU(ctx), time.Since(r.epoch)
	sleepUntil(ctx, time.Now().Add(r.ChangesWindow))
	after, to := r.meter.CPU(ctx), time.Since(r.epoch)
	var u CPUUsage
	u.Add(before, after)
	n := int64(len(Between(writer.Writes(), from, to)))
	return &ChangeCost{Duration: to - from, Writes: n, CPU: PerOp(u, n, Names(r.Processes))}
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
