// Package parsetree is DuckDB's parse tree of a SELECT as typed Go values:
// what json_serialize_sql returns, decoded strictly, and encoded back to the
// JSON json_deserialize_sql prints as SQL. DuckDB parses and prints; this
// package never parses SQL text and does not call DuckDB.
//
// A caller asks DuckDB for the tree, decodes it, inspects or rewrites it, and
// asks DuckDB to print it:
//
//	SELECT json_serialize_sql(?::VARCHAR)::VARCHAR    -- query text -> JSON
//	doc, err := parsetree.Decode(js)
//	stmt, err := doc.Select()                         // the one statement, or DuckDB's error
//	... type switches on stmt.Node, Walk, Rewrite, Clone, Equal ...
//	js, err = parsetree.Encode(&parsetree.Document{Statements: []*parsetree.SelectStatement{stmt}})
//	SELECT json_deserialize_sql(?::VARCHAR::JSON)     -- JSON -> query text
//
// # The model
//
// Polymorphic nodes are interfaces with one concrete type per DuckDB class:
// Expr (*ColumnRef, *Constant, *Function, *Comparison, ...), TableRef
// (*BaseTable, *Join, *SubqueryRef, ...), QueryNode (*SelectNode, *SetOpNode,
// *RecursiveCTENode) and Modifier (ORDER BY, LIMIT, DISTINCT). A constant's
// Value carries its LogicalType and its data in the Go type that DuckDB's
// serialization of that type implies. Enumerations (join types, expression
// types, window bounds, type ids) are string types whose values are DuckDB's
// own spellings.
//
// The model is of DuckDB 1.5, as bundled by github.com/duckdb/duckdb-go/v2
// v2.10506.0, with DuckDB's default serialization compatibility (v0.10.2),
// which json_serialize_sql follows: fields DuckDB added for newer storage
// versions (a join's is_implicit, a lambda's syntax_type, a set operation's
// children) are not written, and CTE_NODE query nodes do not occur; WITH
// queries are in each query node's CTEs.
//
// # Strictness
//
// Decode refuses what it does not know: a field it does not model, a field
// it needs that is missing, an unknown expression class, table reference or
// query node type, an enumeration value DuckDB 1.5 does not have. The error
// is a *PathError naming the place, as in
//
//	statements[0].node.from_table.left: unknown field "aliass"
//
// so a DuckDB upgrade that renames or adds a field fails loudly instead of
// changing silently what a caller decides. Encode writes every field DuckDB
// writes, in its order, and refuses trees DuckDB could not read: a decoded
// SELECT document encodes to the bytes DuckDB wrote.
//
// # Helpers
//
// Walk visits every node under a root; Rewrite replaces expressions in
// place; Clone deep-copies a tree; Equal compares expressions apart from
// their own alias and the query locations.
package parsetree
