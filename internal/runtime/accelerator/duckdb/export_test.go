//go:build duckdb_arrow

package duckdb

// Exec runs a statement inside the transaction, for tests that set up or break
// tables in ways the runtime never does.
func (t *Tx) Exec(query string) error { return t.exec(query) }
