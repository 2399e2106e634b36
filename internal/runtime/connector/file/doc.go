// Package file is the file connector, upstream's `from: file:<path>` (also
// file://<path>; file:///abs for an absolute path): a CSV, Parquet or JSON file,
// or every such file under a directory, on a local file system. A relative path
// is read from the spicepod's directory.
//
// Wiring, in cmd/dataruntime:
//
//	cfg, err := file.ParseParams(path, ds.Params, accelParams, pod.Paths())
//	src := file.NewSource(cfg)
//	err = src.Open(ctx)             // the file must exist
//	eng.AddDataset(ds, src.Engine()) // an engine.Notifier when file_watcher is enabled
//
// # Params
//
//	file_format                  csv | parquet | json; default from the extension
//	                             (.csv, .parquet, .json, .jsonl, .ndjson); required for a directory
//	hive_partitioning_enabled    false; true reads key=value directories as columns
//	csv_has_header               true
//	csv_delimiter, csv_quote, csv_escape   one character each; DuckDB detects them when unset
//	csv_schema_infer_max_records rows sampled to infer the types (DuckDB's sample_size)
//	json_format                  array | ndjson | jsonl; DuckDB detects it when unset
//	acceleration.params.file_watcher   enabled: refresh when the file changes (polled)
//
// Any other param is an error naming it and the known ones; csv_ params on a
// Parquet dataset and the like are errors too. schema_source_path is refused.
//
// # Reading
//
// Files are read by DuckDB's read_csv, read_parquet and read_json in a private
// in-memory DuckDB instance (duckdbsrc.DB), never the query engine's, which may
// read only this dataset's file or directory. User SQL keeps no file access.
//
// # Position
//
// A file has no log sequence number: a scan's position is the latest
// modification time of the files read, in nanoseconds since 1970, taken before
// reading; it grows by one instead when the files change without that time
// growing (see duckdbsrc.Stamper). It never goes back while the runtime runs.
package file
