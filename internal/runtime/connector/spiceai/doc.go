// Package spiceai is the spice.ai connector: a dataset read from a Spice runtime
// (Spice.ai Cloud, or another runtime such as this one) over plain Arrow Flight,
// as upstream's `from: spice.ai:<table>` with params spiceai_endpoint (default
// DefaultEndpoint) and spiceai_api_key.
//
// Wiring, in cmd/dataruntime, for a dataset whose from: is "spice.ai:<table>":
//
//	cfg, err := spiceai.ParseParams(ds.Params)
//	src := spiceai.NewSource(cfg, path)
//	err = src.Open(ctx)
//	eng.AddDataset(ds, src)
//
// Like upstream's connector, every scan does a Basic handshake (empty user, the
// API key as password) and sends the returned bearer token; it asks for the
// schema with GetSchema(CMD = "SELECT * FROM <table>") and queries with
// GetFlightInfo(CMD = SQL text), then DoGet of the endpoints. The snapshot's
// position is the spice-position header of the answer (zero when absent). This
// connector does not listen for change notices; chain runtimes with the
// flightsql connector for that.
package spiceai
