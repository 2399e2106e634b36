//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// Change capture. While a maintained query reads a table, every transaction
// that deletes or inserts rows of it also copies them, weighted -1 and +1,
// into a temporary table of the transaction's connection (its changes), which
// Update reads before the commit. The changes table is created once per
// connection and emptied before each commit, so a transaction pays for the
// rows it copies, not for creating and dropping a table (DuckDB spends a
// fraction of a millisecond on every statement whatever it holds). Operations
// that replace a table wholesale (a full refresh, an append refresh,
// retention, a materialized view) are not copied: they mark the table reset,
// and what reads it is computed again.

// captures is the DB's registry of the tables whose changes are copied, and
// of the changes tables that exist on each write connection.
type captures struct {
	mu     sync.Mutex
	tables map[string]*capture
	seq    int
	// made says, per write connection (its driver connection), which
	// changes tables exist there and for which generation of their table.
	made map[any]map[string]uint64
}

type capture struct {
	name string // the temporary table's name
	refs int
	gen  uint64 // bumped when the table may have new columns
}

// captureName names the table that holds a transaction's changes of table;
// the name stays the same for the life of the DB.
func (d *DB) captureName(table string) string {
	d.cap.mu.Lock()
	defer d.cap.mu.Unlock()
	return d.captureLocked(table).name
}

func (d *DB) captureLocked(table string) *capture {
	if d.cap.tables == nil {
		d.cap.tables = map[string]*capture{}
	}
	c := d.cap.tables[table]
	if c == nil {
		d.cap.seq++
		c = &capture{name: fmt.Sprintf("_ivm_changes_%d", d.cap.seq)}
		d.cap.tables[table] = c
	}
	return c
}

// capturing returns the name of table's changes table and its generation
// while some maintained query reads its changes, else "".
func (d *DB) capturing(table string) (string, uint64) {
	d.cap.mu.Lock()
	defer d.cap.mu.Unlock()
	if c := d.cap.tables[table]; c != nil && c.refs > 0 {
		return c.name, c.gen
	}
	return "", 0
}

// reshaped notes that table was replaced, perhaps with other columns: its
// changes tables are made again before their next use.
func (d *DB) reshaped(table string) {
	d.cap.mu.Lock()
	defer d.cap.mu.Unlock()
	if c := d.cap.tables[table]; c != nil {
		c.gen++
	}
}

// changesMade reports whether the changes table name of generation gen exists
// on the connection dc.
func (d *DB) changesMade(dc any, name string, gen uint64) bool {
	d.cap.mu.Lock()
	defer d.cap.mu.Unlock()
	g, ok := d.cap.made[dc][name]
	return ok && g == gen
}

// madeChanges records changes tables created by a committed transaction on dc.
func (d *DB) madeChanges(dc any, made map[string]uint64) {
	d.cap.mu.Lock()
	defer d.cap.mu.Unlock()
	if d.cap.made == nil {
		d.cap.made = map[any]map[string]uint64{}
	}
	if d.cap.made[dc] == nil {
		d.cap.made[dc] = map[string]uint64{}
	}
	for name, gen := range made {
		d.cap.made[dc][name] = gen
	}
}

func (d *DB) addCapture(table string) {
	d.cap.mu.Lock()
	defer d.cap.mu.Unlock()
	d.captureLocked(table).refs++
}

func (d *DB) dropCapture(table string) {
	d.cap.mu.Lock()
	defer d.cap.mu.Unlock()
	if c := d.cap.tables[table]; c != nil && c.refs > 0 {
		c.refs--
	}
}

// txChanges is what a transaction changed, for Update.
type txChanges struct {
	touched map[string]bool   // tables written
	reset   map[string]bool   // tables replaced wholesale
	copied  map[string]string // table -> its changes table, written in this tx
	made    map[string]uint64 // changes tables created in this tx -> generation
}

func (t *Tx) touch(table string) {
	if t.changes.touched == nil {
		t.changes.touched = map[string]bool{}
	}
	t.changes.touched[strings.ToLower(table)] = true
}

func (t *Tx) markReset(table string) {
	t.touch(table)
	if t.changes.reset == nil {
		t.changes.reset = map[string]bool{}
	}
	t.changes.reset[strings.ToLower(table)] = true
	t.db.reshaped(strings.ToLower(table))
}

// changesTable returns the name of the table's changes table, making sure it
// exists on the transaction's connection; "" when the table's changes are not
// copied. fresh says that the transaction has copied no changes of the table
// before, so that the changes table is empty.
func (t *Tx) changesTable(table string) (name string, fresh bool, err error) {
	key := strings.ToLower(table)
	t.touch(key)
	name, gen := t.db.capturing(key)
	if name == "" {
		return "", false, nil
	}
	if t.changes.copied[key] != "" {
		return name, false, nil
	}
	if g, ok := t.changes.made[name]; !(ok && g == gen) && !t.db.changesMade(t.dc, name, gen) {
		if err := t.exec(`CREATE OR REPLACE TEMP TABLE ` + name + ` AS SELECT *, 0::INTEGER AS _ivm_w FROM ` + TableIdent(table) + ` LIMIT 0`); err != nil {
			return "", false, fmt.Errorf("record changes of %s: %w", table, err)
		}
		if t.changes.made == nil {
			t.changes.made = map[string]uint64{}
		}
		t.changes.made[name] = gen
	}
	if t.changes.copied == nil {
		t.changes.copied = map[string]string{}
	}
	t.changes.copied[key] = name
	return name, true, nil
}

// copyDeleted returns the statement that copies the rows that a DELETE of
// the rows whose rowids a query selects is about to remove, weighted -1; ""
// when the table's changes are not copied.
func (t *Tx) copyDeleted(table, rowids string) (string, error) {
	name, _, err := t.changesTable(table)
	if name == "" || err != nil {
		return "", err
	}
	return `INSERT INTO ` + name + ` SELECT *, -1 FROM ` + TableIdent(table) + ` WHERE rowid IN (` + rowids + `); `, nil
}

// copyInserted returns the statement that copies rows about to be inserted
// (a SELECT over them), weighted +1; "" when the table's changes are not
// copied.
func (t *Tx) copyInserted(table, rows string) (string, error) {
	name, _, err := t.changesTable(table)
	if name == "" || err != nil {
		return "", err
	}
	return `; INSERT INTO ` + name + ` BY NAME SELECT *, 1 AS _ivm_w FROM (` + rows + `)`, nil
}

// clearChanges empties the transaction's changes tables before it commits, so
// that the next transaction on the connection finds them empty.
func (t *Tx) clearChanges() error {
	for _, name := range t.changes.copied {
		if _, err := t.execPrepared(`DELETE FROM temp.` + name); err != nil {
			return fmt.Errorf("clear recorded changes: %w", err)
		}
	}
	return nil
}

var _ engine.Maintainer = (*DB)(nil)

// maintained is one query whose aggregates the DB keeps in tables of their
// own; the result itself is kept in memory, as of the last commit, and each
// new one is compared with it.
type maintained struct {
	db     *DB
	query  string
	mode   string
	inputs []string
	always bool // reads views: every transaction may change it
	blocks []*aggBlock
	outer  string // evaluated for the result after the blocks are updated

	mu      sync.Mutex
	prev    *engine.Result // the result as of the last commit
	pending *engine.Result // the result of the open transaction's Update
	forward string         // the table of a query of one table's rows, else ""
	delta   string         // that query over the table's changes
	huge    map[int]bool
	names   map[int]string
	closed  bool // guarded by mu
}

// Maintain starts maintaining query: it plans its aggregate blocks, computes
// their state and the result, and returns the result.
func (d *DB) Maintain(stx engine.StoreTx, query string) (engine.Maintained, *engine.Result, error) {
	t, ok := stx.(*Tx)
	if !ok {
		return nil, nil, fmt.Errorf("maintain query: transaction of another store (%T)", stx)
	}
	if err := t.exec(`CREATE SCHEMA IF NOT EXISTS _spice`); err != nil {
		return nil, nil, fmt.Errorf("maintain query: %w", err)
	}
	p := &planner{t: t, qid: viewSeq.Add(1)}
	outer, err := p.plan(query)
	if err != nil {
		return nil, nil, fmt.Errorf("maintain query: %w", err)
	}
	m := &maintained{db: d, query: query, outer: outer, blocks: p.blocks, always: p.views}
	if p.forward != nil {
		return d.maintainRows(t, m, p.forward.name)
	}
	for name := range p.inputs {
		m.inputs = append(m.inputs, name)
	}
	sort.Strings(m.inputs)
	if p.reason != "" {
		m.mode = "recompute: " + p.reason
	} else {
		m.mode = fmt.Sprintf("incremental: %d aggregate(s) maintained from changed rows; the rest of the query evaluated over them on each change", len(m.blocks))
	}
	for _, b := range m.blocks {
		for _, bt := range b.tables {
			d.addCapture(bt.name)
		}
		if err := t.exec(`CREATE TABLE ` + b.state + ` AS ` + b.initial); err != nil {
			m.release()
			return nil, nil, fmt.Errorf("maintain query: compute aggregate state: %w", err)
		}
	}
	if err := m.columns(t, m.outer); err != nil {
		m.release()
		return nil, nil, fmt.Errorf("maintain query: %w", err)
	}
	res, err := m.read(t.ctx, t.conn, m.outer)
	if err != nil {
		m.release()
		return nil, nil, fmt.Errorf("maintain query: compute result: %w", err)
	}
	res.Retain()
	m.prev = res
	return m, res, nil
}

// maintainRows maintains a query of one table's rows: no state, the changes
// are the table's changed rows through the query (m.outer).
func (d *DB) maintainRows(t *Tx, m *maintained, table string) (engine.Maintained, *engine.Result, error) {
	m.forward, m.delta, m.outer, m.inputs = table, m.outer, m.query, []string{table}
	m.mode = "incremental: the table's changed rows, filtered and projected by the query"
	if err := m.columns(t, m.query); err != nil {
		return nil, nil, fmt.Errorf("maintain query: %w", err)
	}
	res, err := m.read(t.ctx, t.conn, m.query)
	if err != nil {
		return nil, nil, fmt.Errorf("maintain query: read rows: %w", err)
	}
	d.addCapture(table)
	return m, res, nil
}

// columns records which result columns of query (the query's own or the one
// evaluated for it) are HUGEINTs to narrow and what the query names them, so
// that every read of the result gives the query's own schema.
func (m *maintained) columns(t *Tx, query string) error {
	return t.conn.Raw(func(dc any) error {
		ins, err := inspect(dc.(driver.Conn), query)
		if err != nil {
			return err
		}
		m.huge = ins.huge
		m.names, err = outputNames(t.ctx, dc.(driver.Conn), m.query)
		return err
	})
}

// shifted returns a column map with every index moved by n.
func shifted[V any](in map[int]V, n int) map[int]V {
	if len(in) == 0 {
		return nil
	}
	out := make(map[int]V, len(in))
	for i, v := range in {
		out[i+n] = v
	}
	return out
}

// updateRows is Update of a query of one table's rows.
func (m *maintained) updateRows(t *Tx) (engine.Diff, error) {
	if t.changes.reset[m.forward] {
		return engine.Diff{}, fmt.Errorf("%w: %s was replaced wholesale (a full refresh or truncation)", engine.ErrResync, m.forward)
	}
	if t.changes.copied[m.forward] == "" {
		return engine.Diff{}, nil
	}
	// The changed rows come after a weight column: the query's columns are
	// one further on.
	rows, err := readResult(t.ctx, t.conn, m.delta, shifted(m.huge, 1), shifted(m.names, 1))
	if err != nil {
		return engine.Diff{}, fmt.Errorf("update maintained query: changed rows: %w", err)
	}
	return splitDiff(rows), nil
}

func (m *maintained) Mode() string { return m.mode }

// Update brings the state and the result up to date with what tx changed.
func (m *maintained) Update(stx engine.StoreTx) (engine.Diff, error) {
	t, ok := stx.(*Tx)
	if !ok {
		return engine.Diff{}, fmt.Errorf("update maintained query: transaction of another store (%T)", stx)
	}
	if !m.affected(t) {
		return engine.Diff{}, nil
	}
	if m.forward != "" {
		return m.updateRows(t)
	}
	for _, b := range m.blocks {
		if err := m.updateBlock(t, b); err != nil {
			return engine.Diff{}, fmt.Errorf("update maintained aggregate: %w", err)
		}
	}
	next, err := m.read(t.ctx, t.conn, m.outer)
	if err != nil {
		return engine.Diff{}, fmt.Errorf("update maintained query: evaluate: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	diff, err := diffResults(m.prev, next)
	if err != nil {
		next.Release()
		return engine.Diff{}, fmt.Errorf("update maintained query: compare results: %w", err)
	}
	if m.pending != nil {
		m.pending.Release()
	}
	m.pending = next
	return diff, nil
}

// Committed keeps the result of the last Update when its transaction
// committed, and drops it when it rolled back.
func (m *maintained) Committed(ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending == nil {
		return
	}
	if ok {
		m.prev.Release()
		m.prev = m.pending
	} else {
		m.pending.Release()
	}
	m.pending = nil
}

// splitDiff turns rows whose first column is a weight, -1 rows first, into a
// Diff without that column. It takes over rows's records.
func splitDiff(rows *engine.Result) engine.Diff {
	fields := rows.Schema.Fields()[1:]
	md := rows.Schema.Metadata()
	d := engine.Diff{Schema: arrow.NewSchema(fields, &md)}
	for _, rec := range rows.Records {
		w := rec.Column(0)
		n := int(rec.NumRows())
		split := 0
		for split < n && w.ValueStr(split) == "-1" {
			split++
		}
		body := array.NewRecordBatch(d.Schema, rec.Columns()[1:], rec.NumRows())
		if split > 0 {
			d.Delete = append(d.Delete, body.NewSlice(0, int64(split)))
		}
		if split < n {
			d.Insert = append(d.Insert, body.NewSlice(int64(split), int64(n)))
		}
		body.Release()
		rec.Release()
	}
	return d
}

// affected reports whether tx wrote any of the query's inputs.
func (m *maintained) affected(t *Tx) bool {
	if len(t.changes.touched) == 0 {
		return false
	}
	if m.always {
		return true
	}
	for _, in := range m.inputs {
		if t.changes.touched[in] {
			return true
		}
	}
	return false
}

// updateBlock updates one aggregate's state: from its changed rows when one of
// its tables changed row by row, from scratch when a table was replaced or
// several changed (their changes would also have to be joined to each other).
func (m *maintained) updateBlock(t *Tx, b *aggBlock) error {
	var changed []blockTable
	full := false
	for _, bt := range b.tables {
		if t.changes.reset[bt.name] {
			full = true
		}
		if t.changes.touched[bt.name] {
			changed = append(changed, bt)
		}
	}
	switch {
	case len(changed) == 0:
		return nil
	case full || len(changed) > 1 || t.changes.copied[changed[0].name] == "":
		return t.exec(`DELETE FROM ` + b.state + `; INSERT INTO ` + b.state + ` ` + b.initial)
	}
	if !b.minmax {
		// Sums and counts add up: the new state is the old one and the
		// changes' state, grouped again (a query over the groups, not the rows).
		_, err := t.execPrepared(b.merge(changed[0].name))
		return err
	}
	d := fmt.Sprintf("_ivm_delta_%d", viewSeq.Add(1))
	if err := t.exec(`CREATE TEMP TABLE ` + d + ` AS ` + b.delta[changed[0].name]); err != nil {
		return err
	}
	defer t.exec(`DROP TABLE IF EXISTS temp.` + d)
	match := func(a, c string) string {
		if b.groups == 0 {
			return "TRUE"
		}
		parts := make([]string, b.groups)
		for i := range parts {
			parts[i] = fmt.Sprintf("%s._g%d IS NOT DISTINCT FROM %s._g%d", a, i, c, i)
		}
		return strings.Join(parts, " AND ")
	}
	// A group that lost rows may have lost its MIN or MAX: computed again from
	// the tables, as pg_ivm does; the other groups merge as sums do.
	stmts := []string{
		`DELETE FROM ` + b.state + ` s WHERE EXISTS (SELECT 1 FROM ` + d + ` d WHERE d._r > 0 AND ` + match("s", "d") + `)`,
		`INSERT INTO ` + b.state + ` SELECT * FROM (` + b.initial + `) q WHERE EXISTS (SELECT 1 FROM ` + d + ` d WHERE d._r > 0 AND ` + match("q", "d") + `)`,
		`DELETE FROM ` + d + ` WHERE _r > 0`,
	}
	var set []string
	for k, a := range b.aggs {
		switch a.fn {
		case "sum", "avg":
			set = append(set, fmt.Sprintf("_s%d = coalesce(s._s%d, 0) + coalesce(d._s%d, 0)", k, k, k), fmt.Sprintf("_c%d = s._c%d + coalesce(d._c%d, 0)", k, k, k))
		case "count":
			set = append(set, fmt.Sprintf("_c%d = s._c%d + coalesce(d._c%d, 0)", k, k, k))
		case "min", "max":
			pick := map[string]string{"min": "least", "max": "greatest"}[a.fn]
			set = append(set, fmt.Sprintf("_m%d = CASE WHEN d._m%d IS NULL THEN s._m%d WHEN s._m%d IS NULL THEN d._m%d ELSE %s(s._m%d, d._m%d) END", k, k, k, k, k, pick, k, k))
		}
	}
	set = append(set, "_n = s._n + coalesce(d._n, 0)")
	cols := strings.Join(b.cols, ", ")
	stmts = append(stmts,
		`UPDATE `+b.state+` s SET `+strings.Join(set, ", ")+` FROM `+d+` d WHERE `+match("s", "d"),
		`INSERT INTO `+b.state+` (`+cols+`) SELECT `+cols+` FROM `+d+` d WHERE NOT EXISTS (SELECT 1 FROM `+b.state+` s WHERE `+match("s", "d")+`)`)
	if b.groups > 0 {
		stmts = append(stmts, `DELETE FROM `+b.state+` WHERE _n = 0`)
	}
	return t.exec(strings.Join(stmts, "; "))
}

// merge is the statement that adds the state of a table's changes to the
// block's state, for blocks without MIN or MAX: the changes' state is grouped,
// then merged into the state's rows of its groups (sums of NULL stay NULL, as
// sum() does), and a group whose rows are all gone leaves. It touches the
// changed groups only; a block without groups has one state row, computed
// again from itself and the changes.
func (b *aggBlock) merge(table string) string {
	cols := strings.Join(b.cols, ", ")
	var sel, groups, match, set, vals []string
	for _, c := range b.cols {
		if strings.HasPrefix(c, "_g") {
			sel = append(sel, c)
			groups = append(groups, c)
			match = append(match, "s."+c+" IS NOT DISTINCT FROM d."+c)
		} else {
			sel = append(sel, "sum("+c+") AS "+c)
			set = append(set, c+" = coalesce(s."+c+" + d."+c+", s."+c+", d."+c+")")
		}
		vals = append(vals, "d."+c)
	}
	if len(groups) == 0 {
		return `CREATE OR REPLACE TABLE ` + b.state + ` AS SELECT ` + strings.Join(sel, ", ") + ` FROM (SELECT ` + cols + ` FROM ` + b.state +
			` UNION ALL SELECT ` + cols + ` FROM (` + b.delta[table] + `))`
	}
	d := `SELECT ` + strings.Join(sel, ", ") + ` FROM (SELECT ` + cols + ` FROM (` + b.delta[table] + `)) GROUP BY ` + strings.Join(groups, ", ")
	return `MERGE INTO ` + b.state + ` s USING (` + d + `) d ON ` + strings.Join(match, " AND ") +
		` WHEN MATCHED AND s._n + d._n = 0 THEN DELETE` +
		` WHEN MATCHED THEN UPDATE SET ` + strings.Join(set, ", ") +
		` WHEN NOT MATCHED AND d._n <> 0 THEN INSERT (` + cols + `) VALUES (` + strings.Join(vals, ", ") + `)`
}

// Rows returns the maintained result.
func (m *maintained) Rows(ctx context.Context) (*engine.Result, error) {
	if m.forward != "" {
		conn, err := m.db.db.Conn(ctx)
		if err != nil {
			return nil, fmt.Errorf("read maintained result: %w", err)
		}
		defer conn.Close()
		return m.read(ctx, conn, m.query)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prev.Retain()
	return &engine.Result{Schema: m.prev.Schema, Records: slices.Clone(m.prev.Records), Rows: m.prev.Rows, Bytes: m.prev.Bytes}, nil
}

// read runs the query or one over its columns and returns its rows as the
// query itself would give them (HUGEINT narrowed, DataFusion's names).
func (m *maintained) read(ctx context.Context, conn *sql.Conn, query string) (*engine.Result, error) {
	return readResult(ctx, conn, query, m.huge, m.names)
}

// readResult runs query and returns its rows with the HUGEINT columns of huge
// narrowed and the columns of names renamed (both by column index).
func readResult(ctx context.Context, conn *sql.Conn, query string, huge map[int]bool, names map[int]string) (*engine.Result, error) {
	var res *engine.Result
	err := conn.Raw(func(dc any) error {
		a, err := duckdb.NewArrowFromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		rd, err := a.QueryContext(ctx, query)
		if err != nil {
			return err
		}
		defer rd.Release()
		res = &engine.Result{Schema: renameSchema(narrowSchema(rd.Schema(), huge), names)}
		for rd.Next() {
			rec, err := narrowRecord(res.Schema, rd.RecordBatch(), huge)
			if err != nil {
				return err
			}
			if len(names) > 0 {
				rec = withNames(res.Schema, rec)
			}
			res.Records = append(res.Records, rec)
			res.Rows += rec.NumRows()
			res.Bytes += RecordBytes(rec)
		}
		return rd.Err()
	})
	if err != nil {
		if res != nil {
			res.Release()
		}
		return nil, err
	}
	return res, nil
}

// Close drops the query's state and stops copying changes for it.
func (m *maintained) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.release()
	for _, r := range []*engine.Result{m.prev, m.pending} {
		if r != nil {
			r.Release()
		}
	}
	m.prev, m.pending = nil, nil
	m.mu.Unlock()
	if len(m.blocks) == 0 {
		return nil
	}
	var drop []string
	for _, b := range m.blocks {
		drop = append(drop, `DROP TABLE IF EXISTS `+b.state)
	}
	if _, err := m.db.wdb.ExecContext(ctx, strings.Join(drop, "; ")); err != nil {
		return fmt.Errorf("drop maintained query state: %w", err)
	}
	return nil
}

// release unregisters the change capture of the query's tables.
func (m *maintained) release() {
	if m.forward != "" {
		m.db.dropCapture(m.forward)
	}
	for _, b := range m.blocks {
		for _, bt := range b.tables {
			m.db.dropCapture(bt.name)
		}
	}
}

// dropMaintained removes the state tables a previous process left behind:
// subscriptions do not outlive the process that served them.
func (d *DB) dropMaintained(ctx context.Context) error {
	rows, err := d.db.QueryContext(ctx, `SELECT table_name FROM duckdb_tables() WHERE schema_name = '_spice' AND table_name LIKE '\_ivm\_%' ESCAPE '\'`)
	if err != nil {
		return fmt.Errorf("list maintained query state: %w", err)
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, n)
	}
	rows.Close()
	for _, n := range names {
		if _, err := d.db.ExecContext(ctx, `DROP TABLE IF EXISTS _spice.`+Ident(n)); err != nil {
			return fmt.Errorf("drop maintained query state %s: %w", n, err)
		}
	}
	return nil
}
