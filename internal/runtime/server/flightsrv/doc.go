// Package flightsrv is the runtime's Arrow Flight server: plain Flight and Flight SQL
// on one gRPC port, answering from the engine, as upstream Spice's runtime does.
//
// Wiring, in cmd/dataruntime:
//
//	srv := flightsrv.New(flagFlight, eng)     // eng is an *engine.Engine
//	srv.Logger = logger
//	srv.Metrics = flightsrv.NewMetrics(registry)
//	srv.PrimaryKeys = func(table string) []string { ... from the spicepod ... }
//	if err := srv.Open(); err != nil { ... }   // binds; srv.Addr() is the address
//	defer srv.Close(ctx)                       // graceful, bounded by ctx
//
// Flight SQL: statement queries execute at GetFlightInfo; the result is held
// under a random ticket (TicketTTL, MaxTicketBytes) and streamed by DoGet, so both
// answers report the same data. A ticket whose result is gone runs its query
// again. Prepared statements bind one row of parameters (DoPut), carried inside
// the returned handle; their parameter schema comes from ParamTypes. Catalog commands report catalog "spice", schema "public",
// datasets as "BASE TABLE" and views as "VIEW"; GetTables with include_schema
// carries each table's Arrow schema. Updates, transactions and Substrait answer
// Unimplemented: the runtime serves reads only.
//
// Plain Flight: command or ticket bytes that are not a Flight SQL message are SQL
// text (a PATH descriptor reads the named table). The handshake answers at once
// with an "authorization: Bearer" header and one response, without waiting for a
// client message; any Basic credentials are accepted and no call requires the
// token. The action spice.watch (wire.ActionWatch) streams a notice after every
// change of a table, which the flightsql connector of a chained runtime listens to.
//
// A DoGet answer from the engine's results cache is sent as the Flight messages
// encoded for its cache entry the first time (kept in the entry's engine.Memo):
// the same bytes the Arrow writer produces, without encoding them per request.
//
// Subscriptions: DoExchange whose first message carries a CMD descriptor
// {"subscribe": "<dataset or view>"} (wire.SubscribeRequest) streams the rows of
// the table or view: the schema, snapshot batches, a commit marker, then per
// change its delete batches, insert batches and a commit marker, progress markers,
// and a heartbeat after HeartbeatInterval of silence; every batch carries a
// wire.SubscriptionMeta as app_metadata and markers are batches of zero rows (see
// package wire for the exact order). The engine must implement Subscriber;
// otherwise, and when the store cannot maintain results, the answer is
// Unimplemented, on which subscribers fall back to spice.watch. A subscriber that
// falls behind the engine's queue gets ResourceExhausted, one whose rows were
// replaced wholesale Aborted; a closing server ends streams with Unavailable.
// Both runtimes log the subscription's mode.
//
// Every data answer carries gRPC header metadata spice-position (the LSN the
// answer reflects) and results-cache-status (HIT, MISS or BYPASS). A request may
// send spice-min-position to wait (bounded by the engine) for fresher data, and
// cache-control: no-cache to bypass the results cache.
//
// With APIKeys, every call but health checks is authenticated from its headers
// when its stream opens (a tap handle), before any of its messages is read, and
// a connection on which no call has authenticated is closed once it has sent
// PreAuthBytes (growing back at PreAuthRate). Addresses that send too many
// wrong keys get ResourceExhausted before their keys are checked
// (apikey.Throttle). Every connection runs at most MaxStreams calls at once,
// sends headers of at most DefaultMaxHeaderBytes, completes its preface within
// ConnectTimeout and is closed after IdleTimeout without calls.
//
// Errors become gRPC codes in one place: bad SQL and unknown tables are
// InvalidArgument with DuckDB's message; a dataset that has not loaded is
// Unavailable and names it; a minimum position not reached in time is
// DeadlineExceeded; a closing runtime is Unavailable; anything unexpected is
// Internal and logged.
package flightsrv
