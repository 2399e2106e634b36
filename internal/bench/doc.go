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
//	freshness window (writes and pollers only) -> closed-loop rounds ->
//	open-loop rounds -> grace (pollers catch the last writes) -> memory
//
// The writer posts orders at a fixed rate for the whole run and keeps each write's
// token (the Spice-Position of POST /orders) and the time it was acknowledged.
// Dedicated pollers (DefaultPollers per hop, DefaultPollInterval apart) read every
// hop, apart from the throughput load, and keep each position when it first
// appears. They are dedicated rather than riding on the load's answers because the
// rounds load one path at a time: piggy-backing would watch a hop closely during
// its own slice and not at all during the others'. Match turns writes and
// observations into write-to-visible lags; it is a pure function, tested on its
// own. Lags are reported for a window without read load and for the rounds.
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
