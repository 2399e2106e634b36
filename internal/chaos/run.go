package chaos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// Defaults of Runner.
const (
	DefaultWarmup         = 3 * time.Second
	DefaultSettle         = 5 * time.Second
	DefaultRecoverTimeout = 3 * time.Minute
	maxDetails            = 5
)

// Runner runs faults against a stack, one per round, and judges each round.
type Runner struct {
	Stack     *Stack
	Client    *Client
	Collector *Collector
	Products  []int64 // product ids the writer orders; required
	// WriteRate and ReadersPerPath configure each round's Workload.
	WriteRate      float64
	ReadersPerPath int
	// Warmup runs the workload before the fault (DefaultWarmup); Settle after
	// recovery (DefaultSettle); RecoverTimeout bounds the wait for recovery and
	// for convergence (DefaultRecoverTimeout).
	Warmup, Settle, RecoverTimeout time.Duration
	Logger                         *slog.Logger
	// Files are the compose files of each acceleration mode (nil: the
	// stack's default); a round whose fault needs another mode switches the
	// accelerated runtime first.
	Files map[string][]string
	// Links are the slow-link proxies (ModeSlow).
	Links []*Proxy

	mode string
	acks []Ack // every acknowledged order of every round so far
}

// Result is one round's measurements.
type Result struct {
	Fault       string
	Description string
	Writes      int // POST /orders attempted
	Acked       int // answered 201
	// ErrorSeconds is, per endpoint, the number of seconds with non-2xx answers.
	ErrorSeconds map[string]int
	// PlainErrorSeconds counts only requests without a Spice-Min-Position.
	PlainErrorSeconds map[string]int
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
	// Load is what a load round (Fault.Load) measured; nil for the others.
	Load *LoadFindings
	// Converged is whether, after the quiet period, every path held exactly the
	// acknowledged orders and the same tallies as Postgres.
	Converged  bool
	Lost       int // acknowledged orders missing from Postgres or accelerated
	Doubled    int // order ids held more than once
	Mismatches int // tallies or rankings not equal to Postgres's
	RYW        int // read-your-writes violations
	Monotonic  int // monotonic-read violations
	Watermarks int // watermark decreases
	Unexpected int // non-2xx answers on endpoints that do not depend on the failed part
	Details    []string
	Err        string // the fault could not be injected or healed, or the stack not read
}

// Clean reports whether the round found nothing wrong.
func (r Result) Clean() bool {
	return r.Err == "" && r.Recovered && r.Converged && r.Lost == 0 && r.Doubled == 0 && r.Mismatches == 0 &&
		r.RYW == 0 && r.Monotonic == 0 && r.Watermarks == 0 && r.Unexpected == 0
}

// Meets reports whether the round met the recovery goal: recovered within
// RecoveryGoal of the fault's end, with no failed request ending later than
// that.
func (r Result) Meets() bool {
	return r.Recovered && r.Recover <= RecoveryGoal && r.Beyond <= RecoveryGoal
}

// RecoveryGoal is how soon after a fault's end every path must answer again.
const RecoveryGoal = 3 * time.Second

func (r *Runner) defaults() {
	if r.Warmup <= 0 {
		r.Warmup = DefaultWarmup
	}
	if r.Settle <= 0 {
		r.Settle = DefaultSettle
	}
	if r.RecoverTimeout <= 0 {
		r.RecoverTimeout = DefaultRecoverTimeout
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
}

// Round runs one fault under the workload and judges it.
func (r *Runner) Round(ctx context.Context, f Fault) Result {
	r.defaults()
	res := Result{Fault: f.Name, Description: f.Description}
	log := r.Logger.With("fault", f.Name)
	if err := r.switchMode(ctx, f.Mode); err != nil {
		res.Err = err.Error()
		return res
	}
	env := &Env{Stack: r.Stack, Client: r.Client, Links: r.Links, PostgresURL: r.Collector.PostgresURL}
	defer func() { res.Details = append(res.Details, env.notes...) }()
	if f.Prepare != nil {
		log.Info("prepare")
		if err := f.Prepare(ctx, env); err != nil {
			res.Err = "prepare: " + err.Error()
			return res
		}
		// The next round starts once every ranking reflects the preparation.
		out, err := env.SQL(ctx, `SELECT pg_current_wal_lsn()`)
		lsn, perr := position.Parse(out)
		if err != nil || perr != nil || !r.waitRecovered(ctx, lsn, r.RecoverTimeout) {
			res.Err = fmt.Sprintf("prepare: the rankings did not catch up within %s (%v)", r.RecoverTimeout, errors.Join(err, perr))
			return res
		}
	}
	rate := r.WriteRate
	if f.Load != nil && f.Load.Rate > 0 {
		rate = f.Load.Rate
	}
	w := &Workload{Client: r.Client, Products: r.Products, WriteRate: rate, ReadersPerPath: r.ReadersPerPath}
	env.Workload = w
	w.Open()
	closed := false
	closeWorkload := func() {
		if !closed {
			w.Close()
			closed = true
		}
	}
	defer closeWorkload()

	sleep(ctx, r.Warmup)
	injected := time.Now()
	log.Info("inject", "what", f.Description)
	if err := f.Inject(ctx, env); err != nil {
		res.Err = "inject: " + err.Error()
	}
	sleep(ctx, f.Hold)
	if f.Heal != nil {
		if err := f.Heal(ctx, env); err != nil && res.Err == "" {
			res.Err = "heal: " + err.Error()
		}
	}
	healed := time.Now()
	end := healed // the fault's end: healed, or the restarted process ready
	if f.Restarts != "" {
		if pollEvery(ctx, r.RecoverTimeout, readyPoll, f.Restarts+" to be ready", func() bool {
			return ready(ctx, r.Client, r.Collector.PostgresURL, f.Restarts)
		}) == nil {
			end = time.Now()
			res.Start = end.Sub(healed)
		}
	}
	token := w.Token()
	log.Info("fault over; waiting for recovery", "token", token, "start", res.Start.Round(100*time.Millisecond))
	res.Recovered = r.waitRecovered(ctx, token, time.Until(end.Add(r.RecoverTimeout)))
	res.Recover = time.Since(end)
	log.Info("recovered", "ok", res.Recovered, "after", res.Recover.Round(100*time.Millisecond))
	if err := r.Stack.WaitHealthy(ctx, r.RecoverTimeout, Services...); err != nil && res.Err == "" {
		res.Err = err.Error()
	}
	sleep(ctx, r.Settle)
	closeWorkload()

	acks, reads, marks := w.Results()
	r.acks = append(r.acks, acks...)
	res.Acked = len(acks)
	for _, rd := range reads {
		if rd.Endpoint == EndpointOrders {
			res.Writes++
		}
	}
	r.judgeReads(&res, reads, marks, f.Allowed)
	res.Beyond = ErrorsBeyond(reads, end)
	if f.Load != nil {
		res.Load = judgeLoad(acks, w, injected, healed, end.Add(res.Recover))
		res.Load.Overload = f.Load.Overload
	}
	r.judgeState(ctx, &res)
	log.Info("judged", "clean", res.Clean(), "acked", res.Acked, "lost", res.Lost, "doubled", res.Doubled,
		"ryw", res.RYW, "monotonic", res.Monotonic, "unexpected", res.Unexpected)
	return res
}

// switchMode recreates the accelerated runtime in mode and waits until the
// stack is healthy and every ranking answers again.
func (r *Runner) switchMode(ctx context.Context, mode string) error {
	if mode == r.mode {
		return nil
	}
	r.Logger.Info("switching the accelerated runtime's mode", "mode", modeName(mode))
	r.Stack.Files = r.Files[mode]
	if _, err := r.Stack.Run(ctx, "up", "-d"); err != nil {
		return fmt.Errorf("switch to mode %s: %w", modeName(mode), err)
	}
	r.mode = mode
	if err := r.Stack.WaitHealthy(ctx, r.RecoverTimeout, Services...); err != nil {
		return fmt.Errorf("switch to mode %s: %w", modeName(mode), err)
	}
	if !r.waitRecovered(ctx, 0, r.RecoverTimeout) {
		return fmt.Errorf("switch to mode %s: the rankings did not answer within %s", modeName(mode), r.RecoverTimeout)
	}
	return nil
}

func modeName(mode string) string {
	if mode == ModeMemory {
		return "memory"
	}
	return mode
}

// waitRecovered polls the three rankings with token as Spice-Min-Position until
// all answer 2xx at or beyond it.
func (r *Runner) waitRecovered(ctx context.Context, token position.LSN, limit time.Duration) bool {
	return pollEvery(ctx, limit, readyPoll, "recovery", func() bool {
		for _, ep := range RankingEndpoints {
			_, rd := r.Client.Ranking(ctx, "recovery", ep, token, true)
			if !rd.OK() || rd.Position < token {
				return false
			}
		}
		return true
	}) == nil
}

func (r *Runner) judgeReads(res *Result, reads []Read, marks []WatermarkSample, allowed []string) {
	rf := CheckReads(reads, allowed)
	wm := CheckWatermarks(marks)
	res.ErrorSeconds, res.PlainErrorSeconds = rf.ErrorSeconds, rf.PlainErrorSeconds
	res.RYW, res.Monotonic, res.Watermarks = len(rf.RYW), len(rf.Monotonic), len(wm)
	for _, n := range rf.Unexpected {
		res.Unexpected += n
	}
	for _, vs := range [][]Violation{rf.RYW, rf.Monotonic, wm} {
		for _, v := range vs[:min(len(vs), maxDetails)] {
			res.Details = append(res.Details, v.Kind+": "+v.Detail)
		}
	}
	for _, ep := range Endpoints {
		if n := rf.Unexpected[ep]; n > 0 {
			res.Details = append(res.Details, fmt.Sprintf("unexpected: %d non-2xx answers on %s", n, ep))
		}
	}
}

// judgeState polls the stack until every path holds what Postgres holds, or
// RecoverTimeout runs out, and records what was still wrong.
func (r *Runner) judgeState(ctx context.Context, res *Result) {
	if len(r.acks) == 0 {
		res.Details = append(res.Details, "no order was acknowledged")
		return
	}
	from := slices.MinFunc(r.acks, func(a, b Ack) int { return int(a.ID - b.ID) }).ID
	var last StateFindings
	var lastErr error
	res.Converged = poll(ctx, r.RecoverTimeout, "convergence", func() bool {
		s, err := r.Collector.Collect(ctx, from)
		if lastErr = err; err != nil {
			return false
		}
		last = CheckState(r.acks, s)
		return last.Converged()
	}) == nil
	if lastErr != nil {
		res.Err = "read the stack: " + lastErr.Error()
		return
	}
	res.Lost, res.Doubled, res.Mismatches = len(last.Lost), len(last.Doubled), len(last.Mismatches)
	if !last.Converged() {
		res.Details = append(res.Details, "after the quiet period: "+last.Summary())
	}
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// LoadFindings is a load round's throughput, memory and lag.
type LoadFindings struct {
	// Rate is the write rate asked before the fault; Overload the one asked
	// between inject and heal (zero for none); Achieved the acknowledged
	// orders per second between inject and heal (the whole round without an
	// overload); Skipped the writes not sent because every write slot waited.
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

func judgeLoad(acks []Ack, w *Workload, injected, healed, recovered time.Time) *LoadFindings {
	l := &LoadFindings{Rate: w.WriteRate, Skipped: w.Skipped(), BaseRSS: map[string]int64{}, PeakRSS: map[string]int64{},
		LagSeconds: map[string]float64{}, LagBytes: map[string]int64{}, Behind: map[string]int64{},
		CatchUp: recovered.Sub(healed)}
	from, to := injected, healed
	n := 0
	for _, a := range acks {
		if !a.At.Before(from) && a.At.Before(to) {
			n++
		}
	}
	if d := to.Sub(from).Seconds(); d > 0 {
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
