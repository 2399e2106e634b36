//go:build duckdb_arrow

// Package duckdb is the accelerator: it keeps accelerated datasets in embedded DuckDB
// and runs every query. It is the only package that talks to DuckDB.
//
// Writes go through a Tx, which holds one DuckDB connection and one transaction: a
// full refresh, an append, a batch of changes and the new watermark of each dataset
// touched commit together or not at all, so a reader sees the old data with the old
// watermark or the new data with the new one, never a mix.
//
// Every DuckDB statement of the runtime is written here: the engine and the
// change feed ask for operations (Replace, Append, ApplyChanges, CreateIndex,
// DeleteOlderThan, SetWatermark, SetFingerprint), never for SQL text.
// Identifiers are quoted by Ident (engine.Ident, the runtime's one quoting).
//
// Reads go through Query, which accepts exactly one SELECT statement and refuses
// everything else (DDL, DML, ATTACH, COPY, PRAGMA, SET, INSTALL/LOAD, CALL...). The
// database is opened with external access off, so file and network table functions
// such as read_csv fail even inside a SELECT, and extensions are never installed or
// loaded. Queries run under a time-out and a result size limit.
//
// Before the guard, a user query's names are resolved as upstream's catalog
// has them (resolve.go): spice.public.x and public.x read x, SHOW TABLES,
// DESCRIBE and information_schema read literal rows listing the datasets and
// views (DB.Relations, introspect.go), and a dataset with a recorded ordering
// (DB.SetOrder, order.go) is read in it. The rewritten query is what the
// guard checks and DuckDB runs.
//
// The package needs the duckdb_arrow build tag (DuckDB's Arrow interface); without it
// the package is empty and the runtime does not build.
package duckdb
