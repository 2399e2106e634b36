// Package engine runs one spicepod: its datasets, their refresh, its views, the
// results cache and the watermark of everything it serves.
//
// The engine knows connectors only as Source (and the change feeds as callers of
// Apply) and the accelerator only as Store, both declared here. Wiring happens in
// cmd/dataruntime:
//
//	e := engine.New(store)
//	e.AddDataset(spec, source)   // for each dataset
//	e.AddView(spec)              // for each view
//	e.Open(ctx)                  // restore watermarks, start loading and refreshing
//	res, err := e.Query(ctx, engine.Query{SQL: "SELECT ..."})
//	e.Close(ctx)
//
// Positions. Every dataset has a watermark: the source position (Postgres LSN) its
// accelerated data reflects, stored by the Store in the same transaction as the data.
// A view's watermark is the least of its inputs'. Every answer carries the least
// watermark of what it read, and a reader may ask for a minimum position: the engine
// waits up to MinPositionTimeout for it and fails with ErrPositionTimeout otherwise.
//
// Readiness. A dataset is ready once it has loaded once. A query on a dataset that
// is not ready fails with a NotReadyError naming it, unless the dataset says
// ready_state: on_registration, in which case the query reads the source meanwhile.
// One failing dataset never blocks views or queries that do not read it.
//
// Admission. User queries run in bounded slots, in two lanes (see Admission):
// heavy queries take at most half, a new query text runs in a light slot only
// on trial, and a query that holds a light slot for LightBudget moves to the
// heavy lane or is stopped and queued there, so the rankings keep answering
// whatever ad-hoc queries arrive. The engine's own work does not pass through
// admission.
package engine
