// Package bench measures the recipe's API the way the recipe's table does (oha
// -n -c, closed loop), and then more fairly: every scenario in one run,
// interleaved in rounds so machine drift hits all alike, after a warm-up,
// under a steady write load, with latency percentiles from vegeta's
// estimator, open-loop runs at fixed rates, the results cache on and off,
// write-to-visible lag per hop, and the same at several data sizes. Its other
// runners measure the write path (WritesRunner), reads under heavy ad-hoc
// queries (RunHeavy), replicas failing (RunFailover) and restarts at scale
// (RestartRunner).
//
// A run, per data size:
//
//	seed (optional) -> wait until both runtimes reflect it -> warm-up ->
//	changes window (writes only) -> freshness window (writes and their reads
//	only) -> closed-loop rounds -> open-loop rounds -> grace (the last
//	writes' reads get their answers) -> memory
//
// The Writer posts orders at a fixed rate for the whole run and keeps each
// write's token (the Spice-Position of POST /orders) and the time it was
// acknowledged. Freshness uses the system's own read-your-writes mechanism
// rather than polling: for every n-th write (--freshness-sample), the Watch
// reads every hop once with Spice-Min-Position set to the token, and the
// server answers only once it reflects that position, or 504 after its bound
// (about 10 s). The hop's lag is the answer's arrival minus the write's; it
// includes one read's latency, and nothing is subtracted. This costs one read
// per traced write and hop, where pollers cost hundreds a second whether
// anything changed or not, and it has no polling interval to blur the lag.
// Each answer's own Spice-Position must be at or past the token: one below is
// a read-your-writes violation, a correctness bug that the report puts first.
// A failed read (504, transport error, cut by the end of the grace period)
// counts as not seen, with its reason. Match turns writes and answers into
// lags; it is a pure function, tested on its own.
//
// Ratios compare 2xx answers per second, so a path that fails fast never looks
// fast; the Requests/sec column counts every answer, as oha's does.
//
// Use:
//
//	r := bench.NewRunner(bench.Config{Settings: bench.Settings{BaseURL: "http://localhost:9999"}})
//	r.Out = os.Stdout
//	rep, err := r.Run(ctx) // errors.Is(err, bench.ErrUnreachable): nothing answers
//	md := bench.Markdown(rep)
//
// Timings are measured here, never asserted: missing a goal is reported next to
// the goal, and is not an error.
package bench
