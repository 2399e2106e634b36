package tagtest

import "testing"

// Tag is the build tag the runtime's packages and their tests need.
const Tag = "duckdb_arrow"

// Missing fails tb, saying how to run the tests with the tag. Call it from a
// test built only without the tag.
func Missing(tb testing.TB) {
	tb.Helper()
	tb.Fatal("this package's tests need the " + Tag + " build tag (duckdb-go builds DuckDB's Arrow interface only with it); " +
		"without it they would be left out: run make test-unit, make test, or go test -tags " + Tag + " ./...")
}
