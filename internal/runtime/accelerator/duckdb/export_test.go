//go:build duckdb_arrow

package duckdb

// Exec runs a statement inside the transaction, for tests that set up or break
// tables in ways the runtime never does.
func (t *Tx) Exec(query string) error { return t.exec(query) }

// SetLimitBuffer sets the rows a maintained query with a LIMIT keeps past it,
// so that tests reach the refill from the body with few rows.
func (d *DB) SetLimitBuffer(n int64) { d.limitBuffer = n }
