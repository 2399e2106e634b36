//go:build duckdb_arrow

package duckdb

import "net/url"

// querySemantics sets the DuckDB options that make queries answer as upstream
// Spice (DataFusion) and Postgres do, on the database and so on every
// connection:
//
//   - default_null_order=postgres: NULLs sort last ascending and first
//     descending when the query does not say (DuckDB's default is NULLS LAST
//     both ways). The recipe's "order by count desc limit 5" ranks a product
//     without orders first, as in Postgres and upstream.
//   - integer_division=true: "/" on two integers is integer division
//     truncated toward zero (7/2 = 3, -7/2 = -3), as in DataFusion and
//     Postgres; DuckDB's default answers 3.5.
//
// README "Compatibility" lists what still differs.
func querySemantics(q url.Values) {
	q.Set("default_null_order", "postgres")
	q.Set("integer_division", "true")
}
