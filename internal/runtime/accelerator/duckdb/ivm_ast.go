//go:build duckdb_arrow

package duckdb

import (
	"fmt"
	"strings"

	pt "github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb/parsetree"
)

// The planner works on DuckDB's own parse tree: json_serialize_sql gives it
// as JSON, package parsetree decodes it strictly into typed values (a DuckDB
// whose tree has a field this runtime does not know fails loudly instead of
// being misread), the planner reads and rewrites it (a table reference
// becomes the table's changes, a select list the parts of an aggregate's
// state), and json_deserialize_sql prints it as SQL. DuckDB parses and
// prints; nothing here parses SQL text.

// sqlConn runs one scalar query; Tx implements it.
type sqlConn interface {
	scalar(query string, args ...any) (string, error)
}

func (t *Tx) scalar(query string, args ...any) (string, error) {
	var s string
	err := t.conn.QueryRowContext(t.ctx, query, args...).Scan(&s)
	return s, err
}

// parseQuery returns the parse tree of a query text of one SELECT.
func parseQuery(c sqlConn, query string) (*pt.SelectStatement, error) {
	js, err := c.scalar(`SELECT json_serialize_sql(?::VARCHAR)::VARCHAR`, query)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	doc, err := pt.Decode([]byte(js))
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	stmt, err := doc.Select()
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	return stmt, nil
}

// parseSelectNode returns the SELECT node of a query text.
func parseSelectNode(c sqlConn, query string) (*pt.SelectNode, error) {
	stmt, err := parseQuery(c, query)
	if err != nil {
		return nil, err
	}
	n, ok := stmt.Node.(*pt.SelectNode)
	if !ok {
		return nil, fmt.Errorf("parse: %q is not a SELECT", query)
	}
	return n, nil
}

// render prints a query node as SQL.
func render(c sqlConn, n pt.QueryNode) (string, error) {
	js, err := pt.Encode(&pt.Document{Statements: []*pt.SelectStatement{{Node: n}}})
	if err != nil {
		return "", fmt.Errorf("print query: %w", err)
	}
	s, err := c.scalar(`SELECT json_deserialize_sql(?::VARCHAR::JSON)`, string(js))
	if err != nil {
		return "", fmt.Errorf("print query: %w", err)
	}
	return s, nil
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
// expression under n ("" when none): maintaining such a query from changes
// would not give what evaluating it gives.
func volatile(n pt.Node) string {
	var found string
	pt.Walk(n, func(x pt.Node) bool {
		if found != "" {
			return false
		}
		switch e := x.(type) {
		case *pt.Function:
			if nondeterministic[strings.ToLower(e.Name)] {
				found = e.Name + "()"
			}
		case *pt.Window:
			found = "a window function"
		case *pt.Subquery:
			found = "a subquery expression"
		}
		return true
	})
	return found
}

// columnRef returns the dotted parts of a column reference, and false for
// any other expression.
func columnRef(e pt.Expr) (qualifier, column string, ok bool) {
	c, isRef := e.(*pt.ColumnRef)
	if !isRef {
		return "", "", false
	}
	switch len(c.Names) {
	case 1:
		return "", c.Names[0], true
	case 2:
		return c.Names[0], c.Names[1], true
	}
	return "", "", false
}

// substitute returns a copy of tmpl with every reference to a column named
// as a key of with replaced by a copy of its expression.
func substitute(tmpl pt.Expr, with map[string]pt.Expr) pt.Expr {
	return pt.Rewrite(pt.Clone(tmpl), func(e pt.Expr) pt.Expr {
		if q, c, ok := columnRef(e); ok && q == "" {
			if x, found := with[c]; found {
				return pt.Clone(x)
			}
		}
		return nil
	}).(pt.Expr)
}

// conjuncts flattens AND.
func conjuncts(e pt.Expr) []pt.Expr {
	if c, ok := e.(*pt.Conjunction); ok && c.Op == pt.ConjunctionAnd {
		var out []pt.Expr
		for _, ch := range c.Children {
			out = append(out, conjuncts(ch)...)
		}
		return out
	}
	return []pt.Expr{e}
}

// equalColumns returns the two sides of an equality, and false for any other
// condition.
func equalColumns(e pt.Expr) (pt.Expr, pt.Expr, bool) {
	c, ok := e.(*pt.Comparison)
	if !ok || c.Op != pt.CompareEqual {
		return nil, nil, false
	}
	return c.Left, c.Right, true
}

// tableRefName is the store's name of a table reference: lower case,
// schema-qualified unless in main.
func tableRefName(t *pt.BaseTable) string {
	name := strings.ToLower(t.Table)
	if s := strings.ToLower(t.Schema); s != "" && s != "main" {
		name = s + "." + name
	}
	return name
}

// qualifierOf is what a table reference's columns are qualified by.
func qualifierOf(t *pt.BaseTable) string {
	if t.Alias != "" {
		return t.Alias
	}
	return t.Table
}

// constantInt reads a non-negative integer constant; a nil expression (or
// NULL) gives def.
func constantInt(e pt.Expr, def int64) (int64, bool) {
	if e == nil {
		return def, true
	}
	c, ok := e.(*pt.Constant)
	if !ok {
		return 0, false
	}
	if c.Value.IsNull {
		return def, true
	}
	switch c.Value.Type.ID {
	case pt.TypeTinyint, pt.TypeSmallint, pt.TypeInteger, pt.TypeBigint,
		pt.TypeUTinyint, pt.TypeUSmallint, pt.TypeUInteger, pt.TypeUBigint:
	default:
		return 0, false
	}
	switch v := c.Value.Data.(type) {
	case int64:
		return v, v >= 0
	case uint64:
		return int64(v), v <= 1<<62
	}
	return 0, false
}
