// Package ranking is the read side of the recipe: the "top 5 selling products"
// answered by three sources that must agree, so the api can show what local
// acceleration and materialization buy.
//
// The three queries share one ordering (count descending with products that never
// sold last, ties broken by name in byte order), so their answers are comparable row
// for row:
//
//	PostgresQuery      the recipe's view query, run on Postgres (package orders runs it)
//	AcceleratedQuery   the same query, sent to the accelerated runtime
//	MaterializedQuery  a scan of the materialized runtime's rankings table
//
// A Flight reads one runtime over Arrow Flight: by default with one DoGet whose
// ticket is the query text (Spice's Flight service and ours run such a ticket as
// SQL), or with Protocol = ProtocolFlightSQL as the recipe's Flight SQL driver does,
// GetFlightInfo and then DoGet. It keeps one gRPC client for its whole life (gRPC
// multiplexes concurrent calls over one connection) and bounds each call with
// Timeout:
//
//	acc := ranking.NewFlight("accelerated runtime", "accelerated:50051", ranking.AcceleratedQuery)
//	if err := acc.Open(); err != nil { ... }
//	defer acc.Close()
//	res, err := acc.Ranking(ctx, ranking.Request{MinPosition: lsn})
//
// With TLS set (a *tls.Config) the client speaks TLS to a runtime serving
// runtime.tls; a failed handshake is ErrUnavailable saying to check TLS.
// TransportCredentials gives other clients of the same runtime (the replicas'
// health watch) the same credentials.
//
// An answer whose bytes equal the last one's is not decoded again (its rows are
// shared, read-only). With Coalesce, concurrent reads of the same Request share
// calls: those arriving while a call is in flight wait for the next one, so each
// answer still comes from a call that started after its read arrived.
//
// Every Result carries the source position it reflects (the runtime's spice-position
// header) and, from a runtime, its results-cache status. Errors wrap one of the
// sentinels ErrUnavailable, ErrTimeout and ErrBadAnswer inside a *SourceError that
// names the runtime and its address.
package ranking
