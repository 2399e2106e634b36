//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// The read-only guard. A user query is parsed (never bound or run) with DuckDB's
// json_serialize_sql, which serializes SELECT statements only, and its syntax tree
// is checked before anything executes: one SELECT; no SHOW/DESCRIBE/SUMMARIZE;
// tables of the user's schema only (not _spice, information_schema, pg_catalog
// or DuckDB's sqlite_/pg_/duckdb_ catalog views); no table function but range,
// generate_series and unnest; no scalar function that reveals the host or the
// engine's settings. External access (files, URLs) is off in DuckDB besides.

// allowedTableFunctions are the table functions users may call.
var allowedTableFunctions = map[string]bool{"range": true, "generate_series": true, "unnest": true}

// deniedFunctions are scalar functions that reveal settings, the host, the
// catalog or the engine's activity, or change state a later query sees.
var deniedFunctions = map[string]bool{
	"current_setting": true, "getenv": true, "version": true, "current_database": true,
	"current_catalog": true, "current_schema": true, "current_schemas": true, "current_query": true,
	"getvariable": true, "col_description": true, "obj_description": true, "shobj_description": true,
	"format_pg_type": true, "format_type": true, "in_search_path": true, "get_block_size": true,
	// Counters of the engine's activity.
	"txid_current": true, "current_transaction_id": true, "current_query_id": true, "current_connection_id": true,
	// Addresses of the connection (NULL in DuckDB, refused all the same).
	"inet_client_addr": true, "inet_client_port": true, "inet_server_addr": true, "inet_server_port": true,
	// State that outlives the query: the connection's random seed, sequences,
	// DuckDB's log.
	"setseed": true, "nextval": true, "currval": true, "write_log": true,
	// Waiting for nothing holds a query slot.
	"sleep_ms": true,
	// Plans and parse trees of other query texts, internals included.
	"json_serialize_plan": true, "json_serialize_sql": true, "json_deserialize_sql": true,
}

// deniedFunctionPrefixes cover families of introspection functions; the
// Postgres compatibility functions (pg_) all describe the catalog or the
// server, but for allowedPgFunctions.
var deniedFunctionPrefixes = []string{"duckdb_", "pragma_", "pg_", "has_", "json_execute"}

// allowedPgFunctions are pg_ functions about a value, not the server.
var allowedPgFunctions = map[string]bool{"pg_typeof": true, "pg_size_pretty": true}

// internalSchemas and internalTablePrefixes name what users may not read:
// DuckDB's catalog views are reachable without a schema (duckdb_tables,
// pragma_database_list with the database file's path, sqlite_master,
// pg_class).
var (
	internalSchemas       = map[string]bool{"_spice": true, "information_schema": true, "pg_catalog": true, "system": true, "temp": true}
	internalTablePrefixes = []string{"_spice", "sqlite_", "pg_", "duckdb_", "pragma_", "information_schema"}
)

// checkedQuery is what the guard learned of a query text.
type checkedQuery struct {
	tables         []string
	tableFunctions bool
}

// guard checks query on dc; the error, if any, wraps ErrReadOnly. Every query
// must be one SELECT; a user's query is also held to the rules above.
func guard(ctx context.Context, dc driver.Conn, query string, user bool) (checkedQuery, error) {
	tree, err := serialize(ctx, dc, query)
	if err != nil {
		return checkedQuery{}, err
	}
	var doc struct {
		Error      bool              `json:"error"`
		Message    string            `json:"error_message"`
		Statements []json.RawMessage `json:"statements"`
	}
	if err := json.Unmarshal([]byte(tree), &doc); err != nil {
		return checkedQuery{}, fmt.Errorf("inspect statement: %w", err)
	}
	if doc.Error {
		if strings.Contains(doc.Message, "Only SELECT") {
			return checkedQuery{}, refusedStatement(dc, query)
		}
		return checkedQuery{}, errors.New(doc.Message)
	}
	if len(doc.Statements) != 1 {
		return checkedQuery{}, fmt.Errorf("%w: the text holds more than one statement (%d); send one SELECT", ErrReadOnly, len(doc.Statements))
	}
	if !user {
		return checkedQuery{}, nil
	}
	var node any
	if err := json.Unmarshal(doc.Statements[0], &node); err != nil {
		return checkedQuery{}, fmt.Errorf("inspect statement: %w", err)
	}
	w := walker{ctes: map[string]bool{}}
	w.walk(node)
	if w.err != nil {
		return checkedQuery{}, fmt.Errorf("%w: %v", ErrReadOnly, w.err)
	}
	var out checkedQuery
	out.tableFunctions = w.tableFunctions
	for _, t := range w.tables {
		if !w.ctes[strings.ToLower(t)] {
			out.tables = append(out.tables, t)
		}
	}
	return out, nil
}

// refusedStatement names the kind of a statement that is not a SELECT: from
// DuckDB when it can prepare the text, else from its first keyword (DuckDB
// refuses to prepare COPY ... TO a file with external access off).
func refusedStatement(dc driver.Conn, query string) error {
	st, err := dc.Prepare(query)
	if err != nil && isMultiStatement(err) {
		return fmt.Errorf("%w: the text holds more than one statement; send one SELECT", ErrReadOnly)
	}
	kind := ""
	if err == nil {
		if typ, err := st.(*duckdb.Stmt).StatementType(); err == nil && typ != duckdb.STATEMENT_TYPE_SELECT {
			kind = stmtName(typ)
		}
		st.Close()
	}
	if kind == "" {
		kind = firstKeyword(query)
	}
	return fmt.Errorf("%w: got %s statement; this runtime is read-only: send one SELECT, and write to the source instead", ErrReadOnly, kind)
}

// statementKeywords name statements by their first word.
var statementKeywords = map[string]string{
	"copy": "a COPY", "export": "an EXPORT", "import": "an IMPORT", "pragma": "a PRAGMA", "insert": "an INSERT",
	"update": "an UPDATE", "delete": "a DELETE", "create": "a CREATE", "drop": "a DROP", "alter": "an ALTER",
	"attach": "an ATTACH", "detach": "a DETACH", "install": "an INSTALL", "load": "a LOAD", "set": "a SET",
	"reset": "a RESET", "call": "a CALL", "checkpoint": "a CHECKPOINT", "vacuum": "a VACUUM", "begin": "a transaction",
	"commit": "a transaction", "rollback": "a transaction", "use": "a USE", "truncate": "a TRUNCATE", "merge": "a MERGE",
	"explain": "an EXPLAIN", "describe": "a DESCRIBE", "show": "a SHOW", "summarize": "a SUMMARIZE",
}

// firstKeyword names the statement by its first word, past blanks, comments
// and parentheses.
func firstKeyword(query string) string {
	s := query
	for {
		s = strings.TrimLeft(s, " \t\r\n(")
		switch {
		case strings.HasPrefix(s, "--"):
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				s = s[i+1:]
				continue
			}
			s = ""
		case strings.HasPrefix(s, "/*"):
			if i := strings.Index(s, "*/"); i >= 0 {
				s = s[i+2:]
				continue
			}
			s = ""
		}
		break
	}
	end := strings.IndexFunc(s, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') })
	if end < 0 {
		end = len(s)
	}
	if name, ok := statementKeywords[strings.ToLower(s[:end])]; ok {
		return name
	}
	return "a non-SELECT"
}

func serialize(ctx context.Context, dc driver.Conn, query string) (string, error) {
	rows, err := dc.(driver.QueryerContext).QueryContext(ctx, `SELECT json_serialize_sql(?::VARCHAR)::VARCHAR`,
		[]driver.NamedValue{{Ordinal: 1, Value: query}})
	if err != nil {
		return "", fmt.Errorf("parse query: %w", err)
	}
	defer rows.Close()
	dest := make([]driver.Value, 1)
	if err := rows.Next(dest); err != nil {
		if errors.Is(err, io.EOF) {
			return "", errors.New("parse query: no answer")
		}
		return "", fmt.Errorf("parse query: %w", err)
	}
	s, _ := dest[0].(string)
	return s, nil
}

type walker struct {
	tables         []string
	ctes           map[string]bool
	tableFunctions bool
	err            error
}

func (w *walker) walk(v any) {
	if w.err != nil {
		return
	}
	switch x := v.(type) {
	case []any:
		for _, c := range x {
			w.walk(c)
		}
	case map[string]any:
		w.node(x)
	}
}

func (w *walker) node(x map[string]any) {
	str := func(k string) string { s, _ := x[k].(string); return strings.ToLower(s) }
	switch str("type") {
	case "base_table":
		schema, catalog, name := str("schema_name"), str("catalog_name"), str("table_name")
		if internalSchemas[schema] || internalSchemas[catalog] || hasPrefix(name, internalTablePrefixes) || hasPrefix(schema, internalTablePrefixes) {
			w.err = fmt.Errorf("%s is internal to the runtime; query the datasets and views listed by GET /v1/datasets", qualified(catalog, schema, name))
			return
		}
		w.tables = append(w.tables, datasetName(schema, x["table_name"].(string)))
	case "show_ref":
		w.err = errors.New("SHOW, DESCRIBE and SUMMARIZE are not available; list datasets with GET /v1/datasets or Flight SQL GetTables")
		return
	case "table_function":
		if fn, ok := x["function"].(map[string]any); ok {
			name, _ := fn["function_name"].(string)
			if !allowedTableFunctions[strings.ToLower(name)] {
				w.err = fmt.Errorf("table function %s is not available to queries (only range, generate_series and unnest are); read datasets and views by name", name)
				return
			}
			w.tableFunctions = true
		}
	}
	if str("class") == "function" {
		name := str("function_name")
		if deniedFunctions[name] || hasPrefix(name, deniedFunctionPrefixes) && !allowedPgFunctions[name] {
			w.err = fmt.Errorf("function %s is not available to queries: it reveals the runtime's settings or host", name)
			return
		}
	}
	if cm, ok := x["cte_map"].(map[string]any); ok {
		if entries, ok := cm["map"].([]any); ok {
			for _, e := range entries {
				if m, ok := e.(map[string]any); ok {
					if k, ok := m["key"].(string); ok {
						w.ctes[strings.ToLower(k)] = true
					}
				}
			}
		}
	}
	for _, c := range x {
		w.walk(c)
	}
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func qualified(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ".")
}

// suggestion is DuckDB's "Did you mean" hint in a catalog or binder error.
var suggestion = regexp.MustCompile(`\s*Did you mean "([^"]*)"\??`)

// scrub drops DuckDB's catalog suggestions from an error unless they name a table
// or view users may read: a suggestion may otherwise reveal internal tables
// (sqlite_temp_master, pg_attrdef) or functions.
func (d *DB) scrub(ctx context.Context, err error) error {
	msg := err.Error()
	m := suggestion.FindStringSubmatch(msg)
	if m == nil {
		return err
	}
	if d.userTable(ctx, m[1]) {
		return err
	}
	return &scrubbedError{msg: suggestion.ReplaceAllString(msg, ""), err: err}
}

// userTable reports whether name is a table or view of the user's schema.
func (d *DB) userTable(ctx context.Context, name string) bool {
	if hasPrefix(strings.ToLower(name), internalTablePrefixes) {
		return false
	}
	var n int
	err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' AND NOT temporary AND table_name = ?1`+
		` UNION ALL SELECT count(*) FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal AND NOT temporary AND view_name = ?1`+
		` ORDER BY 1 DESC LIMIT 1`, name).Scan(&n)
	return err == nil && n > 0
}

// scrubbedError is a DuckDB error with its suggestion removed; it still matches
// what the original matched.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }
