// Package duckdbsrc is the duckdb connector, upstream's `from: duckdb:<table>`
// with param duckdb_open: a table or view of a DuckDB database file, read in a
// private DuckDB instance opened read-only for each scan (so the file is held
// only while it is read, and a process that writes it between scans is not
// locked out).
//
// It also holds what the file connector shares with it: DB, a private in-memory
// or read-only DuckDB instance that can read only the files it is given, and
// Stamper, which turns file modification times into positions.
//
// Wiring, in cmd/dataruntime, for a dataset whose from: is "duckdb:<table>":
//
//	cfg, err := duckdbsrc.ParseParams(ds.Params, pod.Paths())
//	src := duckdbsrc.NewSource(cfg, path) // "orders", "main.orders", "shop.main.orders"
//	err = src.Open(ctx)                   // the file and the table must exist
//	eng.AddDataset(ds, src)
//
// # Isolation from user queries
//
// The accelerator's DuckDB refuses file access to user SQL
// (enable_external_access=false). The instances here are separate DuckDB
// databases, never the query engine's: their SQL is written by the connector from
// the spicepod, and they too run with external access off, reading only the
// paths allowed at open (allowed_paths, allowed_directories), with the
// configuration locked.
//
// # Position
//
// A file has no log sequence number. A scan's position is the file's
// modification time in nanoseconds since 1970 (of the database file and its
// .wal, the later one), taken before reading, so the rows reflect at least that
// position. Should a file change without its modification time growing (a copy
// that keeps an older time), the position is one more than the last instead: it
// never goes back while the runtime runs.
//
// The function form upstream also accepts (`from: duckdb:read_csv(...)`) is
// refused: use the file connector, `from: file:<path>`, which reads CSV, Parquet
// and JSON.
package duckdbsrc
