// Package bench measures the recipe's API the way the recipe's table does (oha
// -n -c, closed loop), and then more fairly: every scenario in one run, interleaved
// in rounds so machine drift hits all alike, after a warm-up, under a steady write
// load, with percentiles from HDR histograms, open-loop runs at fixed rates, the
// results cache on and off, write-to-visible lag per hop, and the same at several
// data sizes.
//
// A run, per data size:
//
//	seed (optional) -> wait until both runtimes reflect it -> warm-up ->
//	freshness window (writes and their reads only) -> closed-loop rounds ->
//	open-loop rounds -> grace (the last writes' reads get their answers) -> memory
//
// The writer posts orders at a fixed rate for the whole run and keeps each write's
// token (the Spice-Position of POST /orders) and the time it was acknowledged.
// Freshness uses the system's own read-your-writes mechanism rather than polling:
// for each write, the Watch reads every hop once with Spice-Min-Position set to
// the token (at most FreshnessConcurrency reads in flight per hop), and the server
// answers only once it reflects that position, or 504 after its bound (about
// 10 s). The hop's lag is the answer's arrival minus the write's; it includes one
// read's latency, and nothing is subtracted. Every n-th write is traced this way
// (--freshness-sample, 10 by default): all writes happen at the write rate, but
// reading each on every hop would be a load of its own. This costs one read per
// traced write and hop, where pollers cost hundreds a second whether anything changed or not, and
// it has no polling interval to blur the lag. Each answer's own Spice-Position
// must be at or past the token: one below is a read-your-writes violation, a
// correctness bug that the report puts first. A failed read (504, transport
// error, cut by the end of the grace period) counts as not seen, with its reason.
// Reads keep the results cache on: with a minimum position a runtime never serves
// data older than the token, cached or not. Match turns writes and answers into
// lags; it is a pure function, tested on its own. Lags are reported for a window
// without throughput load and for the rounds.
//
// Ratios compare 2xx answers per second, so a path that fails fast never looks
// fast; the Requests/sec column counts every answer, as oha's does.
//
// Use:
//
//	r := bench.NewRunner(bench.Config{BaseURL: "http://localhost:9999"})
//	r.Out = os.Stdout
//	rep, err := r.Run(ctx) // errors.Is(err, bench.ErrUnreachable): nothing answers
//	md := bench.Markdown(rep)
//	svg := bench.SVG(rep)
//
// Timings are measured here, never asserted: missing a goal is reported next to
// the goal, and is not an error.
package bench
