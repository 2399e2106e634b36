//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Name resolution of users' queries, before the read-only guard sees them.
// Upstream Spice serves every dataset as a table of catalog spice, schema
// public (or the schema of a qualified name), and answers SHOW TABLES,
// DESCRIBE and information_schema queries from its catalog; generic SQL
// clients build their queries from that metadata. DuckDB knows neither the
// catalog spice nor the schema public, and its own information_schema lists
// the runtime's internal tables. So a query's syntax tree (json_serialize_sql)
// is read for:
//
//   - spice.public.t and public.t, as a table or as the qualifier of a column:
//     rewritten to t; spice.s.t to s.t;
//   - information_schema.tables, .columns and .schemata (with or without
//     spice.): rewritten to a subquery over literal rows that list the user's
//     datasets and views only (introspect.go);
//   - a top-level SHOW TABLES, SHOW SCHEMAS or DESCRIBE t: rewritten to the
//     information_schema query upstream answers them with.
//
// The rewrite edits the query text at the byte offsets DuckDB's parser
// reports (query_location), after checking that the text there spells the
// name the tree holds; the rest of the text is left as written. The result is
// an ordinary query that reads user tables and literals only, which the guard
// then checks with every rule, so nothing refused stays reachable through a
// rewrite (spice._spice.x becomes _spice.x and is refused as before).

// catalogName is the catalog every dataset and view belongs to, as upstream.
const catalogName = "spice"

// Schemas with a meaning of their own in users' queries.
const (
	publicSchema = "public"
	infoSchema   = "information_schema"
)

// edit replaces query[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// resolution is what name resolution makes of a query text.
type resolution struct {
	sql string
	// volatile: the text depends on the catalog (information_schema, SHOW,
	// DESCRIBE) or on a dataset's columns, so it is resolved again on every
	// run.
	volatile bool
}

// resolve returns the text DuckDB runs for a user's query. A text that does
// not parse as one SELECT is returned unchanged: the guard says why.
func (d *DB) resolve(ctx context.Context, dc driver.Conn, query string) (string, error) {
	if v, ok := d.resolved.Get(query); ok {
		return v, nil
	}
	r, err := d.resolveText(ctx, dc, query, true)
	if err != nil {
		return "", err
	}
	if !r.volatile {
		d.resolved.Add(query, r.sql, int64(len(query)+len(r.sql)+32))
	}
	return r.sql, nil
}

func (d *DB) resolveText(ctx context.Context, dc driver.Conn, query string, top bool) (resolution, error) {
	node, ok := parseOne(ctx, dc, query)
	if !ok {
		return resolution{sql: query}, nil
	}
	if top {
		text, isShow, err := d.showQuery(node)
		if err != nil {
			return resolution{}, err
		}
		if isShow {
			r, err := d.resolveText(ctx, dc, text, false)
			r.volatile = true
			return r, err
		}
	}
	rw := rewriter{query: query, tables: map[string]bool{}}
	rw.walk(node)
	if rw.err != nil {
		return resolution{}, rw.err
	}
	rw.columns(node)
	if rw.err != nil {
		return resolution{}, rw.err
	}
	volatile := rw.info
	if top {
		pending, err := d.orderRead(ctx, dc, node, &rw)
		if err != nil {
			return resolution{}, err
		}
		volatile = volatile || pending
	}
	if len(rw.edits) == 0 {
		return resolution{sql: query, volatile: volatile}, nil
	}
	var cat *catalog
	if rw.info {
		if cat, rw.err = d.catalog(ctx, dc); rw.err != nil {
			return resolution{}, rw.err
		}
	}
	return resolution{sql: rw.apply(cat), volatile: volatile}, nil
}

// parseOne returns the syntax tree of a text that is one SELECT; false
// otherwise.
func parseOne(ctx context.Context, dc driver.Conn, query string) (map[string]any, bool) {
	tree, err := serialize(ctx, dc, query)
	if err != nil {
		return nil, false
	}
	var doc struct {
		Error      bool `json:"error"`
		Statements []struct {
			Node map[string]any `json:"node"`
		} `json:"statements"`
	}
	if err := json.Unmarshal([]byte(tree), &doc); err != nil || doc.Error || len(doc.Statements) != 1 {
		return nil, false
	}
	return doc.Statements[0].Node, true
}

// rewriter collects the edits of one query text.
type rewriter struct {
	query string
	edits []edit
	// tables are the qualified names rewritten as tables ("public.rankings",
	// "spice.public.rankings"), lower case: columns qualified with them are
	// rewritten too.
	tables map[string]bool
	info   bool // an information_schema table is read
	// infoEdits index edits whose text is an information_schema table's
	// name, filled in by apply.
	infoEdits map[int]string
	err       error
}

func (rw *rewriter) walk(v any) {
	switch x := v.(type) {
	case []any:
		for _, c := range x {
			rw.walk(c)
		}
	case map[string]any:
		if strOf(x, "type") == "BASE_TABLE" {
			rw.table(x)
		}
		for _, c := range x {
			rw.walk(c)
		}
	}
}

// table rewrites one table reference when it names the catalog spice, the
// schema public or information_schema.
func (rw *rewriter) table(x map[string]any) {
	cat, schema, name := strOf(x, "catalog_name"), strOf(x, "schema_name"), strOf(x, "table_name")
	lc, ls := strings.ToLower(cat), strings.ToLower(schema)
	if lc != "" && lc != catalogName {
		return // another catalog: DuckDB resolves it (or says it does not exist)
	}
	var text string
	switch {
	case ls == infoSchema:
		if !infoTables[strings.ToLower(name)] {
			rw.err = fmt.Errorf("%w: information_schema.%s is not served; query information_schema.tables, information_schema.columns or information_schema.schemata", ErrReadOnly, name)
			return
		}
		rw.info = true
	case ls == publicSchema:
		text = Ident(name)
	case lc == catalogName:
		text = Ident(schema) + "." + Ident(name)
	default:
		return
	}
	written := nonEmpty(cat, schema, name)
	start, end, ok := nameSpan(rw.query, location(x), written)
	if !ok {
		rw.err = fmt.Errorf("resolve %s: cannot find the name in the query text; write it unquoted as catalog.schema.table or without catalog and schema", strings.Join(written, "."))
		return
	}
	if ls == infoSchema {
		if rw.infoEdits == nil {
			rw.infoEdits = map[int]string{}
		}
		rw.infoEdits[len(rw.edits)] = strings.ToLower(name)
		if strOf(x, "alias") == "" {
			text = " AS " + Ident(strings.ToLower(name))
		}
	}
	rw.edits = append(rw.edits, edit{start: start, end: end, text: text})
	rw.tables[strings.ToLower(strings.Join(written, "."))] = true
	if lc == catalogName {
		rw.tables[ls+"."+strings.ToLower(name)] = true
	}
}

// columns rewrites column references qualified with a table rewritten above:
// spice.public.t.c and public.t.c become t.c, spice.s.t.c becomes s.t.c.
func (rw *rewriter) columns(v any) {
	switch x := v.(type) {
	case []any:
		for _, c := range x {
			rw.columns(c)
		}
	case map[string]any:
		if strOf(x, "class") == "COLUMN_REF" {
			rw.column(x)
		}
		for _, c := range x {
			rw.columns(c)
		}
	}
}

func (rw *rewriter) column(x map[string]any) {
	raw, _ := x["column_names"].([]any)
	parts := make([]string, 0, len(raw))
	for _, p := range raw {
		s, _ := p.(string)
		parts = append(parts, s)
	}
	if len(parts) < 3 {
		return
	}
	drop := 0
	for n := len(parts) - 1; n >= 2; n-- { // the longest written table prefix
		if rw.tables[strings.ToLower(strings.Join(parts[:n], "."))] {
			drop = n - 1 // keep the table's own name
			if strings.EqualFold(parts[0], catalogName) && !isNameOf(parts[1], publicSchema, infoSchema) {
				drop = 1 // spice.s.t.c: keep s.t.c
			}
			break
		}
	}
	if drop == 0 {
		return
	}
	start, _, ok := nameSpan(rw.query, location(x), parts[:drop])
	if !ok {
		rw.err = fmt.Errorf("resolve %s: cannot find the name in the query text; qualify the column with the table name only", strings.Join(parts, "."))
		return
	}
	next, ok := partStart(rw.query, start, drop)
	if !ok {
		return
	}
	rw.edits = append(rw.edits, edit{start: start, end: next})
}

// apply returns the query with the edits made; information_schema tables
// become subqueries over cat.
func (rw *rewriter) apply(cat *catalog) string {
	for i, name := range rw.infoEdits {
		rw.edits[i].text = "(" + cat.subquery(name) + ")" + rw.edits[i].text
	}
	sort.Slice(rw.edits, func(i, j int) bool { return rw.edits[i].start > rw.edits[j].start })
	out := rw.query
	for _, e := range rw.edits {
		out = out[:e.start] + e.text + out[e.end:]
	}
	return out
}

// location is a node's byte offset in the query text; -1 when it has none.
func location(x map[string]any) int {
	f, ok := x["query_location"].(float64)
	if !ok || f < 0 || f > 1<<40 {
		return -1
	}
	return int(f)
}

func nonEmpty(parts ...string) []string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func isNameOf(s string, names ...string) bool {
	for _, n := range names {
		if strings.EqualFold(s, n) {
			return true
		}
	}
	return false
}

// datasetName is the dataset or view name of a table reference after
// resolution: schema.table for a schema of its own, the table alone in the
// default schema.
func datasetName(schema, table string) string {
	if schema == "" || schema == "main" || schema == publicSchema {
		return table
	}
	return schema + "." + table
}

// strOf is a string field of a syntax tree node ("" when absent).
func strOf(x map[string]any, k string) string { s, _ := x[k].(string); return s }
