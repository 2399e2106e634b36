//go:build duckdb_arrow

package duckdb

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	pt "github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb/parsetree"
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
	stmt   *pt.SelectStatement
	ctes   map[string]*pt.SelectStatement // WITH queries by name (lower case)
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
	stmt, err := parseQuery(t, query)
	if err != nil {
		return nil, err
	}
	p := &planner{t: t, stmt: stmt, ctes: map[string]*pt.SelectStatement{}, inputs: map[string]bool{}, inSQL: map[string]bool{}, schema: map[string]*arrow.Schema{}}
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
	root, isSelect := stmt.Node.(*pt.SelectNode)
	switch {
	case p.reason != "":
	case !isSelect:
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
		plan, err := p.inMemory(root, query)
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
	pt.Walk(p.stmt.Node, func(n pt.Node) bool {
		if q, ok := n.(pt.QueryNode); ok {
			for _, c := range q.Base().CTEs {
				p.ctes[strings.ToLower(c.Name)] = c.Query
			}
		}
		return true
	})
	pt.Walk(p.stmt.Node, func(n pt.Node) bool {
		if b, ok := n.(*pt.BaseTable); ok {
			if name := tableRefName(b); p.ctes[name] == nil {
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
func (p *planner) rowsOfOneTable(n *pt.SelectNode) bool {
	b, ok := n.From.(*pt.BaseTable)
	return ok && p.ctes[tableRefName(b)] == nil && b.At == nil && b.Sample == nil &&
		len(n.Modifiers) == 0 && len(n.CTEs) == 0 && !p.aggregates(n) &&
		n.Having == nil && n.Qualify == nil && n.Sample == nil
}

// forward plans a query of one table's rows: in memory when it picks plain
// columns (or *) without a filter, else in SQL over the table's changes.
func (p *planner) forward(n *pt.SelectNode) (*forwardPlan, error) {
	b := n.From.(*pt.BaseTable)
	fwd := &forwardPlan{table: tableRefName(b)}
	q := qualifierOf(b)
	if n.Where == nil && len(b.ColumnAliases) == 0 {
		s, err := p.tableSchema(fwd.table)
		if err != nil {
			return nil, err
		}
		var cols []string
		ok := true
		for _, e := range n.List {
			if star, isStar := e.(*pt.Star); isStar && bareStar(star) && (star.Relation == "" || strings.EqualFold(star.Relation, q)) {
				cols = append(cols, fieldNames(s)...)
				continue
			}
			c, found := forwardColumn(s, e, q)
			ok = ok && found
			cols = append(cols, c)
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

// bareStar reports whether a star is a bare * (or t.*).
func bareStar(s *pt.Star) bool {
	return len(s.Exclude) == 0 && len(s.Replace) == 0 && len(s.Rename) == 0 && len(s.QualifiedExclude) == 0 &&
		s.Expr == nil && !s.Columns
}

// forwardColumn resolves a column reference against one table qualified as q.
func forwardColumn(s *arrow.Schema, e pt.Expr, q string) (string, bool) {
	qual, col, ok := columnRef(e)
	if !ok || qual != "" && !strings.EqualFold(qual, q) {
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

// forwardQuery plans the query of the changed rows of a one-table query: the
// rows deleted (weight -1) then the rows inserted (+1), net.
func (p *planner) forwardQuery(n *pt.SelectNode, table, qualifier string) (string, error) {
	changes := p.t.db.captureName(table)
	var parts []string
	for _, cond := range []string{"_ivm_w < 0", "_ivm_w > 0"} {
		sub, err := parseSelectNode(p.t, `SELECT * FROM (SELECT * EXCLUDE (_ivm_w) FROM `+changes+` WHERE `+cond+`) AS `+Ident(qualifier))
		if err != nil {
			return "", err
		}
		q := pt.Clone(n)
		q.From = sub.From
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
func (p *planner) aggregates(n *pt.SelectNode) bool {
	if len(n.GroupBy) > 0 {
		return true
	}
	for _, item := range n.List {
		if p.hasAggregate(item) {
			return true
		}
	}
	return false
}

// hasAggregate reports whether an expression calls an aggregate function.
func (p *planner) hasAggregate(e pt.Expr) bool {
	found := false
	pt.Walk(e, func(n pt.Node) bool {
		if f, ok := n.(*pt.Function); ok && p.aggFns[strings.ToLower(f.Name)] {
			found = true
		}
		return !found
	})
	return found
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
