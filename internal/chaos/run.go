package chaos

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// Defaults of Options.
const (
	DefaultWarmup         = 3 * time.Second
	DefaultSettle         = 5 * time.Second
	DefaultRecoverTimeout = 3 * time.Minute
	// RecoveryGoal is how soon after a fault's end every path must answer again.
	RecoveryGoal = 3 * time.Second
	// readyPoll is how often a restarted service and the rankings are polled
	// after a fault: the granularity of the Start and Recover columns.
	readyPoll  = 100 * time.Millisecond
	maxDetails = 5
)

// Options are a run's settings.
type Options struct {
	Faults []Fault
	// WriteRate and ReadersPerPath configure each round's Workload.
	WriteRate      float64
	ReadersPerPath int
	// Warmup runs the workload before the fault (DefaultWarmup); Settle after
	// recovery (DefaultSettle); RecoverTimeout bounds the wait for recovery and
	// for convergence (DefaultRecoverTimeout).
	Warmup, Settle, RecoverTimeout time.Duration
	// LoadRate is the load rounds' rate, for the report's settings line (the
	// faults carry it; DefaultLoadRate when zero).
	LoadRate float64
}

// Result is one round's measurements.
type Result struct {
	Fault       string
	Description string
	Writes      int // POST /orders attempted
	Acked       int // answered 201
	// Start is, for a process fault (Fault.Restarts), the time from starting
	// the process again until it answered as ready; zero for other faults.
	Start time.Duration
	// Recover is the time from the fault's end (the restarted process ready, or
	// the fault healed) until all three rankings answered 2xx reflecting every
	// order acknowledged by then; Recovered is false when RecoverTimeout ran out
	// first.
	Recover   time.Duration
	Recovered bool
	// Beyond is how long after the fault's end the last failed request (of any
	// endpoint, answered non-2xx or not at all) ended: the error window beyond
	// the fault itself; zero when none failed after it.
	Beyond time.Duration
	// ReadFindings are the round's read-your-writes and monotonic-read
	// violations, error windows and unexpected failures; Watermarks its
	// watermark decreases.
	ReadFindings
	Watermarks []Violation
	// State is what was still wrong once the quiet period's polling ended;
	// Converged is whether nothing was.
	State     StateFindings
	Converged bool
	// Load is what a load round (Fault.Load) measured; nil for the others.
	Load    *LoadFindings
	Details []string
	Err     string // the fault could not be injected or healed, or the stack not read
}

// Clean reports whether the round found nothing wrong.
func (r Result) Clean() bool {
	return r.Err == "" && r.Recovered && r.Converged && len(r.RYW)+len(r.Monotonic)+len(r.Watermarks)+len(r.Unexpected) == 0
}

// Meets reports whether the round met the recovery goal: recovered within
// RecoveryGoal of the fault's end, with no failed request ending later than
// that.
func (r Result) Meets() bool {
	return r.Recovered && r.Recover <= RecoveryGoal && r.Beyond <= RecoveryGoal
}

// LoadFindings is a load round's throughput, memory and lag.
type LoadFindings struct {
	// Rate is the write rate asked before the fault; Overload the one asked
	// between inject and heal (zero for none); Achieved the acknowledged
	// orders per second between inject and heal; Skipped the writes not sent
	// because every write slot waited.
	Rate, Overload, Achieved float64
	Skipped                  int64
	// Per runtime: RSS before the fault and at its peak in the round (bytes),
	// the largest lag its status reported, and the most WAL it was behind the
	// workload's token.
	BaseRSS, PeakRSS map[string]int64
	LagSeconds       map[string]float64 // absent: never reported
	LagBytes         map[string]int64   // absent: never reported
	Behind           map[string]int64
	// CatchUp is heal until every ranking reflected the token taken at the
	// fault's end (the Recover of an overload round).
	CatchUp time.Duration
}

// runner runs faults against a stack, one per round, and judges each round.
type runner struct {
	*Suite
	Options
	products []int64
	links    []*Proxy
	mode     string
	acks     []Ack // every acknowledged order of every round so far
}

// Run runs every fault in turn against the (started) stack and leaves it as
// it was found: the accelerated runtime in mode: memory.
func (s *Suite) Run(ctx context.Context, o Options) (Report, error) {
	o.Warmup, o.Settle = cmpOr(o.Warmup, DefaultWarmup), cmpOr(o.Settle, DefaultSettle)
	o.RecoverTimeout, o.WriteRate = cmpOr(o.RecoverTimeout, DefaultRecoverTimeout), cmpOr(o.WriteRate, DefaultWriteRate)
	o.ReadersPerPath, o.LoadRate = cmpOr(o.ReadersPerPath, DefaultReadersPerPath), cmpOr(o.LoadRate, DefaultLoadRate)
	r := &runner{Suite: s, Options: o}
	products, err := s.Client.query(ctx, ServicePostgres, "SELECT id FROM products")
	if err != nil {
		return Report{}, fmt.Errorf("read products: %w", err)
	}
	for _, p := range products {
		r.products = append(r.products, toInt(p["id"]))
	}
	if len(r.products) == 0 {
		return Report{}, errors.New("no products in Postgres: the stack's init.sql did not run")
	}
	if slices.ContainsFunc(o.Faults, func(f Fault) bool { return f.Mode == ModeSlow }) {
		if r.links, err = s.openLinks(); err != nil {
			return Report{}, err
		}
		defer closeLinks(r.links)
	}
	rep := Report{Started: time.Now(), Machine: bench.DescribeMachine(ctx, s.Stack), Settings: r.settings(ctx)}
	for _, f := range o.Faults {
		if ctx.Err() != nil {
			break
		}
		rep.Results = append(rep.Results, r.round(ctx, f))
	}
	if err := r.switchMode(ctx, ModeMemory); err != nil {
		return rep, err
	}
	return rep, ctx.Err()
}

// settings is the report's line of the run's settings.
func (r *runner) settings(ctx context.Context) string {
	var names []string
	for _, f := range r.Faults {
		names = append(names, f.Name)
	}
	line := fmt.Sprintf("Workload: %.0f orders/s, %d readers per ranking (every second one with the latest token), "+
		"%s before each fault, %s after recovery. Faults: %s.", r.WriteRate, r.ReadersPerPath, r.Warmup, r.Settle, strings.Join(names, ", "))
	// The first rounds' load depends on it: /ranking aggregates every order in
	// Postgres, and a stack kept from a full run holds the 1M its snapshot
	// rounds seeded (--fresh starts from none).
	if out, err := r.Client.Postgres(ctx, "SELECT count(*) FROM orders"); err == nil {
		line += fmt.Sprintf(" Orders in Postgres at the start: %s.", strings.TrimSpace(out))
	}
	if slices.ContainsFunc(r.Faults, func(f Fault) bool { return f.Load != nil }) {
		line += fmt.Sprintf(" Load rounds: %.0f orders/s (--load-rate); overload rounds %d times that.", r.LoadRate, OverloadFactor)
	}
	return line
}

// round runs one fault under the workload and judges it.
func (r *runner) round(ctx context.Context, f Fault) Result {
	res := Result{Fault: f.Name, Description: f.Description}
	log := r.Logger.With("fault", f.Name)
	if err := r.switchMode(ctx, f.Mode); err != nil {
		res.Err = err.Error()
		return res
	}
	env := &Env{Stack: r.Stack, Client: r.Client, Links: r.links}
	defer func() { res.Details = append(res.Details, env.notes...) }()
	if err := r.prepare(ctx, f, env); err != nil {
		res.Err = "prepare: " + err.Error()
		return res
	}
	w := &Workload{Client: r.Client, Products: r.products, WriteRate: r.WriteRate, ReadersPerPath: r.ReadersPerPath}
	if f.Load != nil && f.Load.Rate > 0 {
		w.WriteRate = f.Load.Rate
	}
	env.Workload = w
	w.Open()
	defer w.Close() // a round cut short still stops its workload

	sleep(ctx, r.Warmup)
	injected := time.Now()
	log.Info("inject", "what", f.Description)
	fail := func(step string, err error) { // the first error counts
		if err != nil && res.Err == "" {
			res.Err = step + err.Error()
		}
	}
	fail("inject: ", f.Inject(ctx, env))
	sleep(ctx, f.Hold)
	if f.Heal != nil {
		fail("heal: ", f.Heal(ctx, env))
	}
	healed := time.Now()
	end := healed // the fault's end: healed, or the restarted process ready
	if f.Restarts != "" && bench.Poll(ctx, r.RecoverTimeout, readyPoll, f.Restarts+" to be ready", func() bool {
		return r.Client.Status(ctx, f.Restarts) == http.StatusOK
	}) == nil {
		end = time.Now()
		res.Start = end.Sub(healed)
	}
	token := w.Token()
	log.Info("fault over; waiting for recovery", "token", token, "start", res.Start.Round(100*time.Millisecond))
	res.Recovered = r.waitRecovered(ctx, token, time.Until(end.Add(r.RecoverTimeout)))
	res.Recover = time.Since(end)
	log.Info("recovered", "ok", res.Recovered, "after", res.Recover.Round(100*time.Millisecond))
	fail("", r.Stack.WaitHealthy(ctx, r.RecoverTimeout, Services...))
	sleep(ctx, r.Settle)
	w.Close()

	r.judge(ctx, &res, f, w, injected, healed, end)
	log.Info("judged", "clean", res.Clean(), "acked", res.Acked, "lost", len(res.State.Lost), "doubled", len(res.State.Doubled),
		"ryw", len(res.RYW), "monotonic", len(res.Monotonic), "unexpected", len(res.Unexpected))
	return res
}

// prepare runs f's preparation, if any, and waits until every ranking
// reflects it.
func (r *runner) prepare(ctx context.Context, f Fault, env *Env) error {
	if f.Prepare == nil {
		return nil
	}
	r.Logger.Info("prepare", "fault", f.Name)
	if err := f.Prepare(ctx, env); err != nil {
		return err
	}
	out, err := r.Client.Postgres(ctx, `SELECT pg_current_wal_lsn()`)
	lsn, perr := position.Parse(out)
	if err != nil || perr != nil || !r.waitRecovered(ctx, lsn, r.RecoverTimeout) {
		return fmt.Errorf("the rankings did not catch up within %s (%v)", r.RecoverTimeout, errors.Join(err, perr))
	}
	return nil
}

// judge checks a round's reads, load and the stack's state once the
// workload w stopped.
func (r *runner) judge(ctx context.Context, res *Result, f Fault, w *Workload, injected, healed, end time.Time) {
	acks, reads, marks := w.Results()
	r.acks = append(r.acks, acks...)
	res.Acked = len(acks)
	for _, rd := range reads {
		if rd.Endpoint == EndpointOrders {
			res.Writes++
		}
	}
	judgeReads(res, reads, marks, f.Allowed)
	res.Beyond = ErrorsBeyond(reads, end)
	if f.Load != nil {
		res.Load = judgeLoad(acks, w, injected, healed, end.Add(res.Recover))
		res.Load.Overload = f.Load.Overload
	}
	r.judgeState(ctx, res)
}

// switchMode recreates the stack in mode and waits until it is healthy and
// every ranking answers again.
func (r *runner) switchMode(ctx context.Context, mode string) error {
	if mode == r.mode {
		return nil
	}
	name := cmp.Or(mode, "memory")
	r.Logger.Info("switching the stack's mode", "mode", name)
	r.Stack.Files = modeFiles[mode]
	if _, err := r.Stack.Run(ctx, "up", "-d"); err != nil {
		return fmt.Errorf("switch to mode %s: %w", name, err)
	}
	r.mode = mode
	if err := r.Stack.WaitHealthy(ctx, r.RecoverTimeout, Services...); err != nil {
		return fmt.Errorf("switch to mode %s: %w", name, err)
	}
	if !r.waitRecovered(ctx, 0, r.RecoverTimeout) {
		return fmt.Errorf("switch to mode %s: the rankings did not answer within %s", name, r.RecoverTimeout)
	}
	return nil
}

// waitRecovered polls the three rankings with token as Spice-Min-Position until
// all answer 2xx at or beyond it.
func (r *runner) waitRecovered(ctx context.Context, token position.LSN, limit time.Duration) bool {
	return bench.Poll(ctx, limit, readyPoll, "recovery", func() bool {
		for _, ep := range RankingEndpoints {
			if _, rd := r.Client.Ranking(ctx, "recovery", ep, token, true); !rd.OK() || rd.Position < token {
				return false
			}
		}
		return true
	}) == nil
}

func judgeReads(res *Result, reads []Read, marks []WatermarkSample, allowed []string) {
	res.ReadFindings, res.Watermarks = CheckReads(reads, allowed), CheckWatermarks(marks)
	for _, vs := range [][]Violation{res.RYW, res.Monotonic, res.Watermarks} {
		for _, v := range vs[:min(len(vs), maxDetails)] {
			res.Details = append(res.Details, v.Kind+": "+v.Detail)
		}
	}
	for _, ep := range Endpoints {
		if n := res.Unexpected[ep]; n > 0 {
			res.Details = append(res.Details, fmt.Sprintf("unexpected: %d non-2xx answers on %s", n, ep))
		}
	}
}

// judgeState polls the stack until every path holds what Postgres holds, or
// RecoverTimeout runs out, and records what was still wrong.
func (r *runner) judgeState(ctx context.Context, res *Result) {
	if len(r.acks) == 0 {
		res.Details = append(res.Details, "no order was acknowledged")
		return
	}
	from := slices.MinFunc(r.acks, func(a, b Ack) int { return int(a.ID - b.ID) }).ID
	var err error
	res.Converged = bench.Poll(ctx, r.RecoverTimeout, 250*time.Millisecond, "convergence", func() bool {
		var s State
		if s, err = r.Client.Collect(ctx, from); err == nil {
			res.State = CheckState(r.acks, s)
		}
		return err == nil && res.State.Converged()
	}) == nil
	switch {
	case err != nil:
		res.Err = "read the stack: " + err.Error()
	case !res.Converged:
		res.Details = append(res.Details, "after the quiet period: "+res.State.Summary())
	}
}

func judgeLoad(acks []Ack, w *Workload, injected, healed, recovered time.Time) *LoadFindings {
	l := &LoadFindings{Rate: w.WriteRate, Skipped: w.Skipped(), BaseRSS: map[string]int64{}, PeakRSS: map[string]int64{},
		LagSeconds: map[string]float64{}, LagBytes: map[string]int64{}, Behind: map[string]int64{}, CatchUp: recovered.Sub(healed)}
	n := 0
	for _, a := range acks {
		if !a.At.Before(injected) && a.At.Before(healed) {
			n++
		}
	}
	if d := healed.Sub(injected).Seconds(); d > 0 {
		l.Achieved = float64(n) / d
	}
	for _, s := range w.Samples() {
		if s.At.Before(injected) && s.RSS > 0 {
			l.BaseRSS[s.Runtime] = max(l.BaseRSS[s.Runtime], s.RSS)
		}
		l.PeakRSS[s.Runtime] = max(l.PeakRSS[s.Runtime], s.RSS)
		l.Behind[s.Runtime] = max(l.Behind[s.Runtime], s.Behind)
		if s.LagSeconds != nil {
			l.LagSeconds[s.Runtime] = max(l.LagSeconds[s.Runtime], *s.LagSeconds)
		}
		if s.LagBytes != nil {
			l.LagBytes[s.Runtime] = max(l.LagBytes[s.Runtime], *s.LagBytes)
		}
	}
	return l
}
