//go:build duckdb_arrow && race

package duckdb_test

// raceDetector says the tests run under -race (about ten times slower).
const raceDetector = true
