// Package api is the HTTP face of the recipe: it writes orders to Postgres and
// reads the top-5 ranking three ways, so a client can compare them.
//
//	POST /orders                 write an order (no body: a random one, as the recipe)
//	GET  /ranking                the ranking from Postgres
//	GET  /ranking-accelerated    the ranking from the accelerated runtime
//	GET  /ranking-materialized   the ranking from the materialized runtime
//	GET  /healthz                200 while the process serves (no I/O)
//	GET  /readyz                 200 when every dependency answers, else 503
//	GET  /noop                   200 with a tiny body (no I/O): the load-test ceiling
//	GET  /                       browsers: to /live; others: the list of endpoints
//	GET  /live, /live/...        the live page, when Server.Live is set (package live)
//
// Positions: POST /orders answers with a Spice-Position header, the read-your-writes
// token; every ranking answers with the Spice-Position it reflects. A ranking request
// may carry Spice-Min-Position (or ?min_position=) to ask for an answer at or past a
// token; the runtimes wait a bounded time for it, Postgres meets it by construction.
//
// The Server knows its dependencies only through the small interfaces declared here
// (OrderStore, RankingReader, Check); cmd/api wires the real ones:
//
//	s := api.NewServer(store, store, accelerated, materialized)
//	s.Addr, s.Logger = ":9999", logger
//	if err := s.Open(); err != nil { ... }
//	defer s.Close(ctx)
//
// Errors are JSON {"error": "..."} with a message that says what to do. statusOf is
// the one place where errors become HTTP statuses; only 5xx answers are logged at
// error level, everything else at debug so load tests stay cheap.
package api
