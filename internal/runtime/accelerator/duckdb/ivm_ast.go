//go:build duckdb_arrow

package duckdb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The incremental maintenance of a query works on DuckDB's own parse tree:
// json_serialize_sql gives it as JSON, the maintainer rewrites parts of it (a
// table reference becomes the table's changes, an aggregate block becomes a read
// of its maintained state), and json_deserialize_sql prints the result as SQL.
// DuckDB parses and prints; nothing here parses SQL text.

// node is one object of the parse tree.
type node = map[string]any

// sqlConn runs one scalar query; Tx implements it.
type sqlConn interface {
	scalar(query string, args ...any) (string, error)
}

func (t *Tx) scalar(query string, args ...any) (string, error) {
	var s string
	err := t.conn.QueryRowContext(t.ctx, query, args...).Scan(&s)
	return s, err
}

// parseTree returns the parse tree of a query text of one SELECT.
func parseTree(c sqlConn, query string) (node, error) {
	js, err := c.scalar(`SELECT json_serialize_sql(?::VARCHAR)::VARCHAR`, query)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	var doc struct {
		Error        bool   `json:"error"`
		ErrorMessage string `json:"error_message"`
		Statements   []struct {
			Node node `json:"node"`
		} `json:"statements"`
	}
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber() // query locations are uint64s that a float64 would round
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("parse: read the parse tree: %w", err)
	}
	if doc.Error {
		return nil, fmt.Errorf("parse: %s", doc.ErrorMessage)
	}
	if len(doc.Statements) != 1 || doc.Statements[0].Node == nil {
		return nil, fmt.Errorf("parse: want one SELECT statement, got %d statements", len(doc.Statements))
	}
	return doc.Statements[0].Node, nil
}

// render prints a query node as SQL.
func render(c sqlConn, n node) (string, error) {
	doc := map[string]any{"error": false, "statements": []any{map[string]any{"node": n, "named_param_map": []any{}}}}
	js, err := json.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("print query: %w", err)
	}
	s, err := c.scalar(`SELECT json_deserialize_sql(?::VARCHAR::JSON)`, string(js))
	if err != nil {
		return "", fmt.Errorf("print query: %w", err)
	}
	return s, nil
}

// clone deep-copies a parse tree value.
func clone[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("clone parse tree: %v", err))
	}
	var out T
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		panic(fmt.Sprintf("clone parse tree: %v", err))
	}
	return out
}

// sameExpr reports whether two expressions are the same apart from their alias
// and where they were written.
func sameExpr(a, b any) bool {
	return canonical(a) == canonical(b)
}

func canonical(v any) string {
	b, _ := json.Marshal(strip(v))
	return string(b)
}

func strip(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if k == "alias" || k == "query_location" {
				continue
			}
			out[k] = strip(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = strip(val)
		}
		return out
	default:
		return v
	}
}

// substitute replaces, in a copy of tmpl, every column reference to a name of
// with by a copy of the expression given for it.
func substitute(tmpl any, with map[string]any) any {
	switch x := tmpl.(type) {
	case map[string]any:
		if x["class"] == "COLUMN_REF" {
			if names, ok := x["column_names"].([]any); ok && len(names) == 1 {
				if name, ok := names[0].(string); ok {
					if e, ok := with[name]; ok {
						return clone(e)
					}
				}
			}
		}
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = substitute(val, with)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = substitute(val, with)
		}
		return out
	default:
		return tmpl
	}
}

// walk calls fn on every object of the tree, depth first; fn returns false to
// skip an object's children.
func walk(v any, fn func(node) bool) {
	switch x := v.(type) {
	case map[string]any:
		if !fn(x) {
			return
		}
		for _, val := range x {
			walk(val, fn)
		}
	case []any:
		for _, val := range x {
			walk(val, fn)
		}
	}
}

// nondeterministic names functions whose value changes between evaluations of
// the same rows: a result maintained from changes would drift from one
// evaluated from scratch.
var nondeterministic = map[string]bool{
	"random": true, "uuid": true, "gen_random_uuid": true, "uuidv4": true, "uuidv7": true, "setseed": true,
	"now": true, "current_timestamp": true, "get_current_timestamp": true, "current_date": true,
	"current_time": true, "today": true, "transaction_timestamp": true, "localtimestamp": true,
	"localtime": true, "nextval": true, "currval": true,
}

// volatile reports the first nondeterministic function, window or subquery
// expression in v ("" when none): maintaining such a block from changes would
// not give what evaluating it gives.
func volatile(v any) string {
	var found string
	walk(v, func(n node) bool {
		if found != "" {
			return false
		}
		switch n["class"] {
		case "FUNCTION":
			if name, _ := n["function_name"].(string); nondeterministic[strings.ToLower(name)] {
				found = name + "()"
			}
		case "WINDOW":
			found = "a window function"
		case "SUBQUERY":
			found = "a subquery expression"
		}
		return true
	})
	return found
}

func str(n node, key string) string {
	s, _ := n[key].(string)
	return s
}

func list(n node, key string) []any {
	l, _ := n[key].([]any)
	return l
}

func obj(n node, key string) node {
	o, _ := n[key].(map[string]any)
	return o
}
