// Package tagtest keeps `go test ./...` without build tags from passing while it
// leaves tests out. The runtime's packages need DuckDB's Arrow interface, which
// duckdb-go builds only with the duckdb_arrow tag; without it their test files
// (and some of their sources) do not compile, and the go command would skip them
// without a word.
//
// So every package with a file built only with the tag holds a test built only
// without it, which fails saying what to run:
//
//	//go:build !duckdb_arrow
//
//	package engine
//
//	func TestNeedsDuckDBArrowTag(t *testing.T) { tagtest.Missing(t) }
//
// The package's own test fails for any package that lacks one.
package tagtest
