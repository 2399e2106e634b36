//go:build duckdb_arrow

package duckdb

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/cqrs-spice/cqrs/internal/runtime/ivm"
)

// The planner decides how a subscribed query is maintained, from DuckDB's
// parse tree of it (ivm_ast.go):
//
//   - A query of one table's rows (SELECT ... FROM t [WHERE ...], no
//     aggregate, DISTINCT, ORDER BY or LIMIT) passes the table's changed rows
//     through the query: in memory when it only picks columns, in SQL over the
//     changed rows otherwise.
//   - A query built of aggregate blocks (ivm_block.go) and a rest that joins
//     them to each other or to tables on equal columns and picks, orders and
//     limits columns (ivm_body.go) is kept in memory (package ivm).
//   - Everything else is computed again on every change of its inputs and
//     compared with the previous result; the mode says why.

// maxArranged bounds the rows of a table the planner copies into memory (a
// dimension table of an aggregate, a table joined by the rest of a query):
// past it, the query is maintained another way.
const maxArranged = 1_000_000

// planned is what the planner decided for one query.
type planned struct {
	mode   string
	inputs []string // the tables read, lower case
	views  bool     // reads something that is not a table of the store
	inSQL  []string // tables whose changes are read in SQL
	mem    *ivm.Plan
	fwd    *forwardPlan
}

// forwardPlan maintains a query of one table's rows.
type forwardPlan struct {
	table string
	cols  []string // in memory: the table's columns the query picks, in order
	delta string   // in SQL: the query over the table's changes (weight first)
}

// planner analyses one query in a transaction.
type planner struct {
	t      *Tx
	root   node
	ctes   map[string]node // WITH queries by name (lower case)
	aggFns map[string]bool
	inputs map[string]bool
	views  bool
	reason string // why the query is computed again on every change
	blocks []ivm.BlockSpec
	inSQL  map[string]bool
	schema map[string]*arrow.Schema // tables' columns, by name
}

// planQuery decides how query is maintained.
func (t *Tx) planQuery(query string) (*planned, error) {
	root, err := parseTree(t, query)
	if err != nil {
		return nil, err
	}
	p := &planner{t: t, root: root, ctes: map[string]node{}, inputs: map[string]bool{}, inSQL: map[string]bool{}, schema: map[string]*arrow.Schema{}}
	if p.aggFns, err = t.aggregateFunctions(); err != nil {
		return nil, err
	}
	if err := p.readInputs(); err != nil {
		return nil, err
	}
	out := &planned{views: p.views}
	for name := range p.inputs {
		out.inputs = append(out.inputs, name)
	}
	sort.Strings(out.inputs)
	switch {
	case p.reason != "":
	case str(root, "type") != "SELECT_NODE":
		p.reason = "it is a set operation (UNION, EXCEPT, INTERSECT)"
	case volatile(root) != "":
		p.reason = "it calls " + volatile(root) + ", which is not maintained"
	case p.rowsOfOneTable(root):
		fwd, err := p.forward(root)
		if err != nil {
			return nil, err
		}
		out.fwd = fwd
		if fwd.cols != nil {
			out.mode = "incremental: the table's changed rows, projected by the query"
		} else {
			out.mode = "incremental: the table's changed rows, filtered and projected by the query"
			out.inSQL = []string{fwd.table}
		}
		return out, nil
	default:
		plan, err := p.inMemory(query)
		if err != nil {
			return nil, err
		}
		if plan != nil {
			out.mem = plan
			for name := range p.inSQL {
				out.inSQL = append(out.inSQL, name)
			}
			sort.Strings(out.inSQL)
			out.mode = p.memoryMode()
			return out, nil
		}
	}
	out.mode = "recompute: " + p.reason
	return out, nil
}

// memoryMode describes an in-memory plan.
func (p *planner) memoryMode() string {
	inSQL := 0
	for _, b := range p.blocks {
		if b.Lookup == nil {
			inSQL++
		}
	}
	mode := fmt.Sprintf("incremental: kept in memory: %d aggregate(s) updated from the changed rows", len(p.blocks))
	if inSQL > 0 {
		mode += fmt.Sprintf(" (%d of them read in SQL: expressions or filters)", inSQL)
	}
	return mode + "; the rest of the query updated by join key"
}

// readInputs collects the WITH queries and the tables the query reads, and
// notes when it reads something that is not a table of the store.
func (p *planner) readInputs() error {
	walk(p.root, func(n node) bool {
		for _, e := range list(obj(n, "cte_map"), "map") {
			m := e.(map[string]any)
			if k, ok := m["key"].(string); ok {
				p.ctes[strings.ToLower(k)] = obj(obj(obj(m, "value"), "query"), "node")
			}
		}
		return true
	})
	walk(p.root, func(n node) bool {
		if str(n, "type") == "BASE_TABLE" {
			if name := tableRefName(n); p.ctes[name] == nil {
				p.inputs[name] = true
			}
		}
		return true
	})
	for name := range p.inputs {
		ok, err := p.t.tableExists(name)
		if err != nil {
			return err
		}
		if !ok {
			p.views = true
			p.reason = "it reads " + name + ", which is not a table of this runtime (a view, say)"
		}
	}
	return nil
}

// tableSchema returns the columns of a table of the store.
func (p *planner) tableSchema(name string) (*arrow.Schema, error) {
	if s := p.schema[name]; s != nil {
		return s, nil
	}
	s, err := p.t.scanSchema(`SELECT * FROM ` + TableIdent(name) + ` LIMIT 0`)
	if err != nil {
		return nil, fmt.Errorf("read the columns of %s: %w", name, err)
	}
	p.schema[name] = s
	return s, nil
}

// rowsOfOneTable reports whether a query selects rows of one table, each on
// its own (no aggregate, DISTINCT, ORDER BY or LIMIT).
func (p *planner) rowsOfOneTable(n node) bool {
	f := obj(n, "from_table")
	return str(f, "type") == "BASE_TABLE" && p.ctes[tableRefName(f)] == nil && f["at_clause"] == nil && f["sample"] == nil &&
		len(list(n, "modifiers")) == 0 && len(list(obj(n, "cte_map"), "map")) == 0 && !p.aggregates(n) &&
		n["having"] == nil && n["qualify"] == nil && n["sample"] == nil
}

// forward plans a query of one table's rows: in memory when it picks plain
// columns (or *) without a filter, else in SQL over the table's changes.
func (p *planner) forward(n node) (*forwardPlan, error) {
	f := obj(n, "from_table")
	fwd := &forwardPlan{table: tableRefName(f)}
	q := qualifierOf(f)
	if n["where_clause"] == nil && len(list(f, "column_name_alias")) == 0 {
		s, err := p.tableSchema(fwd.table)
		if err != nil {
			return nil, err
		}
		var cols []string
		ok := true
		for _, item := range list(n, "select_list") {
			e := item.(map[string]any)
			switch {
			case str(e, "class") == "STAR" && isPlainStar(e):
				cols = append(cols, fieldNames(s)...)
			case str(e, "class") == "COLUMN_REF":
				c, found := forwardColumn(s, e, q)
				ok = ok && found
				cols = append(cols, c)
			default:
				ok = false
			}
		}
		if ok && columnsSupported(s, cols) {
			fwd.cols = cols
			return fwd, nil
		}
	}
	delta, err := p.forwardQuery(n, fwd.table, q)
	fwd.delta = delta
	return fwd, err
}

// isPlainStar reports whether a STAR expression is a bare * (or t.*).
func isPlainStar(e node) bool {
	return len(list(e, "exclude_list")) == 0 && len(list(e, "replace_list")) == 0 &&
		len(list(e, "rename_list")) == 0 && e["expr"] == nil && e["columns"] != true && e["unpacked"] != true
}

// forwardColumn resolves a column reference against one table qualified as q.
func forwardColumn(s *arrow.Schema, e node, q string) (string, bool) {
	names := list(e, "column_names")
	var col string
	switch len(names) {
	case 1:
		col, _ = names[0].(string)
	case 2:
		t, _ := names[0].(string)
		if !strings.EqualFold(t, q) {
			return "", false
		}
		col, _ = names[1].(string)
	default:
		return "", false
	}
	for _, f := range s.Fields() {
		if strings.EqualFold(f.Name, col) {
			return f.Name, true
		}
	}
	return "", false
}

func columnsSupported(s *arrow.Schema, cols []string) bool {
	for _, c := range cols {
		i := s.FieldIndices(c)
		if len(i) == 0 || !ivm.Supported(s.Field(i[0]).Type) {
			return false
		}
	}
	return true
}

// qualifierOf is what a table reference's columns are qualified by.
func qualifierOf(f node) string {
	if a := str(f, "alias"); a != "" {
		return a
	}
	return str(f, "table_name")
}

// forwardQuery plans the query of the changed rows of a one-table query: the
// rows deleted (weight -1) then the rows inserted (+1), net.
func (p *planner) forwardQuery(n node, table, qualifier string) (string, error) {
	changes := p.t.db.captureName(table)
	var parts []string
	for _, cond := range []string{"_ivm_w < 0", "_ivm_w > 0"} {
		sub, err := parseTree(p.t, `SELECT * FROM (SELECT * EXCLUDE (_ivm_w) FROM `+changes+` WHERE `+cond+`) AS `+Ident(qualifier))
		if err != nil {
			return "", err
		}
		q := clone(n)
		q["from_table"] = sub["from_table"]
		text, err := render(p.t, q)
		if err != nil {
			return "", err
		}
		parts = append(parts, text)
	}
	return `WITH d AS (` + parts[0] + `), i AS (` + parts[1] + `)
		SELECT * FROM (SELECT -1 AS _ivm_w, * FROM (SELECT * FROM d EXCEPT ALL SELECT * FROM i)
		UNION ALL SELECT 1, * FROM (SELECT * FROM i EXCEPT ALL SELECT * FROM d)) ORDER BY _ivm_w`, nil
}

// aggregates reports whether a SELECT node aggregates.
func (p *planner) aggregates(n node) bool {
	if len(list(n, "group_expressions")) > 0 {
		return true
	}
	found := false
	for _, item := range list(n, "select_list") {
		walk(item, func(e node) bool {
			if str(e, "class") == "FUNCTION" && p.aggFns[strings.ToLower(str(e, "function_name"))] {
				found = true
			}
			return !found
		})
	}
	return found
}

// tableRefName is the store's name of a table reference: lower case,
// schema-qualified unless in main.
func tableRefName(f node) string {
	name := strings.ToLower(str(f, "table_name"))
	if s := strings.ToLower(str(f, "schema_name")); s != "" && s != "main" {
		name = s + "." + name
	}
	return name
}

// aggregateFunctions returns the names of DuckDB's aggregate functions.
func (t *Tx) aggregateFunctions() (map[string]bool, error) {
	rows, err := t.conn.QueryContext(t.ctx, `SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type = 'aggregate'`)
	if err != nil {
		return nil, fmt.Errorf("list aggregate functions: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{"count_star": true}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out[strings.ToLower(s)] = true
	}
	return out, rows.Err()
}
