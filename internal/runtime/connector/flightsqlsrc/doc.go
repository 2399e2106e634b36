// Package flightsqlsrc is the flightsql connector: a dataset read from another
// runtime (chaining) or any Arrow Flight SQL server, as upstream Spice's
// `from: flightsql:<table>`.
//
// Wiring, in cmd/dataruntime, for a dataset whose from: is "flightsql:<table>":
//
//	cfg, err := flightsqlsrc.ParseParams(ds.Params)   // flightsql_endpoint, _username, _password
//	src := flightsqlsrc.NewSource(cfg, path)         // path: the part after "flightsql:"
//	src.Logger = logger
//	err = src.Open(ctx)                           // no network yet
//	eng.AddDataset(ds, src)
//
// Every Scan finds the table with CommandGetTables{table_name_filter_pattern,
// include_schema} (exactly one row must match, else a clear error lists what the
// upstream has), then runs CommandStatementQuery `SELECT "c1", "c2" FROM <table>
// [WHERE ...]` and streams the DoGet answers of every endpoint to the engine
// without buffering them. The snapshot's position is the upstream's
// spice-position header, so a chained runtime's watermark is the position its
// upstream reported (zero from servers that report none).
//
// Watch listens to the upstream runtime's spice.watch action, so the engine
// refreshes as soon as the upstream changes instead of waiting for
// refresh_check_interval. An upstream that does not offer the action makes Watch
// return at once, and the engine polls.
//
// With refresh_mode: changes, the dataset is served by a Feed instead of
// refreshes (cmd/dataruntime registers it with Engine.AddFeed and gives the
// engine a nil Source): the feed subscribes (Subscribe, Stream; DoExchange, see
// package wire), replaces the local table with the snapshot, applies the
// changes with StoreTx.ApplyDiff (every change queued while the last
// transaction ran goes into the next one, summed into one diff first: net.go)
// and progress markers with Engine.Advance, and
// subscribes again, for a new snapshot, with back-off capped at
// DefaultFeedMaxBackoff when the stream ends. Against an upstream that answers
// Unimplemented it falls back to Watch plus whole reads, logging it once.
//
//	feed := flightsqlsrc.NewFeed(eng, "rankings", src)  // src: *Source or the spice.ai Source
//	eng.AddDataset(ds, nil)
//	eng.AddFeed(feed)
//
// With flightsql_username or flightsql_password, the connector runs a Basic
// handshake and sends the returned bearer token on every call. Endpoints are
// http://host:port (plaintext), https://host[:port] (TLS, system roots) or a bare
// host:port (plaintext).
//
// The helpers Dial, Handshake, Fetch, PositionOf, Subscribe and Feed are shared
// with the spice.ai connector.
package flightsqlsrc
