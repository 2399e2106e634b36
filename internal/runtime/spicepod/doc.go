// Package spicepod reads spicepod.yaml, the file that tells a runtime which
// datasets to load, from where, how to keep them fresh, and which views to
// serve over them. It accepts the format of the Spice.ai OSS runtime
// (version v1beta1 and v1, kind Spicepod), so a cookbook spicepod works
// unchanged, and fills in upstream's defaults.
//
// It is stricter than upstream on purpose. Where upstream ignores a key,
// substitutes an empty string for a missing secret, or accepts settings that
// silently never refresh (append without time_column), Parse refuses the file
// with a message that names the file, the line, the dataset or view and the
// field, and says what is allowed:
//
//	spicepod.yaml: line 14: dataset "orders": acceleration.refresh_mode: "chnges" is not one of full, append, changes
//
// Every problem in the file is reported at once (joined with errors.Join, in
// file order); each is an *Error and matches ErrInvalid, and also
// ErrUnsupported or ErrUnresolved where that applies. Upstream keys that
// change nothing here (runtime.task_history, dataset metadata, ...) are
// accepted and ignored; upstream features this runtime does not serve
// (sqlite and postgres engines, refresh_cron, mutual TLS, models, ...) are
// refused with ErrUnsupported rather than ignored.
//
// Typical use, in a binary's composition root:
//
//	pod, err := spicepod.Load("spicepod.yaml", spicepod.EnvLookup)
//	if err != nil {
//		return err // already names file, line and field
//	}
//	for _, ds := range pod.Datasets {
//		scheme, path := ds.Connector() // "postgres", "public.orders"
//		...
//	}
//
// ${env:NAME} and ${secrets:NAME} in params values are resolved through the
// lookup function given to Load or Parse (EnvLookup reads SPICE_NAME, then
// NAME, upper-cased, as upstream's env store does); so are references to
// stores declared under secrets:, which must all be env stores. Tests pass a
// map-backed lookup instead of touching the environment.
//
// Files a spicepod names (sql_ref here; file: datasets and duckdb_open in
// their connectors, through Pod.Paths) must resolve, symlinks followed, into
// the spicepod's directory or one of Options.AllowedDirs (the runtime's
// --allowed-paths): see Paths.
//
// The package only reads and validates; it opens no connections and decides
// nothing about which connectors exist or whether a connector can serve
// refresh_mode: changes. Those checks belong to the binary and the engine. It
// does refuse settings that a subscription (refresh_mode: changes on flightsql:
// or spice.ai:) cannot honour: refresh_sql, refresh_data_window and retention.
package spicepod
