//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/ivm"
)

var _ engine.Maintainer = (*DB)(nil)

// maintained is one query the DB keeps up to date for subscriptions, in one
// of three ways (ivm_plan.go): in memory (mem), as a table's changed rows
// (fwd), or computed again on every change of its inputs (neither).
type maintained struct {
	db    *DB
	query string
	plan  *planned
	huge  map[int]bool   // result columns that are HUGEINTs to narrow
	names map[int]string // result columns' names

	mu      sync.Mutex
	mem     *ivm.Query
	broken  error          // a transaction the state applied rolled back: computed afresh next
	prev    *engine.Result // recompute: the result as of the last commit
	pending *engine.Result // recompute: the result of the open transaction's Update
	closed  bool
}

// Maintain starts maintaining query: it plans it, computes its state and
// result, and returns the result.
func (d *DB) Maintain(stx engine.StoreTx, query string) (engine.Maintained, *engine.Result, error) {
	t, ok := stx.(*Tx)
	if !ok {
		return nil, nil, fmt.Errorf("maintain query: transaction of another store (%T)", stx)
	}
	pl, err := t.planQuery(query)
	if err != nil {
		return nil, nil, fmt.Errorf("maintain query: %w", err)
	}
	m := &maintained{db: d, query: query, plan: pl}
	if err := m.columns(t); err != nil {
		return nil, nil, fmt.Errorf("maintain query: %w", err)
	}
	for _, in := range pl.inputs {
		d.addCapture(in, slices.Contains(pl.inSQL, in))
	}
	res, err := m.start(t)
	if err != nil {
		m.release()
		return nil, nil, fmt.Errorf("maintain query: %w", err)
	}
	return m, res, nil
}

// start computes the state and returns the result.
func (m *maintained) start(t *Tx) (*engine.Result, error) {
	if m.plan.mem != nil {
		m.mem = ivm.New(*m.plan.mem, memory.DefaultAllocator)
		if err := m.mem.Load(t); err != nil {
			return nil, fmt.Errorf("compute state: %w", err)
		}
		return m.memRows()
	}
	res, err := m.read(t.ctx, t.conn)
	if err != nil {
		return nil, fmt.Errorf("compute result: %w", err)
	}
	if m.plan.fwd == nil {
		res.Retain()
		m.prev = res
	}
	return res, nil
}

// columns records which result columns are HUGEINTs to narrow and what the
// query names them, so that every read of the result gives its own schema.
func (m *maintained) columns(t *Tx) error {
	return t.conn.Raw(func(dc any) error {
		ins, err := inspect(dc.(driver.Conn), m.query)
		if err != nil {
			return err
		}
		m.huge = ins.huge
		m.names, err = outputNames(t.ctx, dc.(driver.Conn), m.query)
		return err
	})
}

func (m *maintained) Mode() string { return m.plan.mode }

// Update brings the result up to date with what tx changed.
func (m *maintained) Update(stx engine.StoreTx) (engine.Diff, error) {
	t, ok := stx.(*Tx)
	if !ok {
		return engine.Diff{}, fmt.Errorf("update maintained query: transaction of another store (%T)", stx)
	}
	if !m.affected(t) {
		return engine.Diff{}, nil
	}
	switch {
	case m.plan.fwd != nil:
		return m.updateRows(t)
	case m.mem != nil:
		return m.updateMemory(t)
	}
	return m.recompute(t)
}

// updateMemory applies the transaction's changes to the in-memory state.
func (m *maintained) updateMemory(t *Tx) (engine.Diff, error) {
	m.mu.Lock()
	broken := m.broken
	m.mu.Unlock()
	if broken != nil {
		// Computed afresh from the store as of tx; subscribers take a new
		// snapshot of it.
		if err := m.mem.Load(t); err != nil {
			return engine.Diff{}, fmt.Errorf("update maintained query: compute state: %w", err)
		}
		m.mu.Lock()
		m.broken = nil
		m.mu.Unlock()
		return engine.Diff{}, fmt.Errorf("%w: %v", engine.ErrResync, broken)
	}
	for _, table := range m.plan.inSQL {
		if t.changes.tables[table] != nil {
			if _, err := t.changesInSQL(table); err != nil {
				return engine.Diff{}, err
			}
		}
	}
	d, err := m.mem.Apply(t, t.changes.tables)
	if err != nil {
		m.markBroken(err)
		return engine.Diff{}, fmt.Errorf("update maintained query: %w", err)
	}
	return m.engineDiff(d), nil
}

// markBroken notes that the in-memory state no longer matches the store.
func (m *maintained) markBroken(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.broken == nil {
		m.broken = err
	}
}

func (m *maintained) engineDiff(d ivm.Diff) engine.Diff {
	out := engine.Diff{Schema: m.plan.mem.Schema}
	if d.Delete != nil {
		out.Delete = []arrow.RecordBatch{d.Delete}
	}
	if d.Insert != nil {
		out.Insert = []arrow.RecordBatch{d.Insert}
	}
	return out
}

// updateRows is Update of a query of one table's rows.
func (m *maintained) updateRows(t *Tx) (engine.Diff, error) {
	f := m.plan.fwd
	c := t.changes.tables[f.table]
	if c == nil {
		return engine.Diff{}, nil
	}
	if c.Reset {
		return engine.Diff{}, fmt.Errorf("%w: %s was replaced wholesale (a full refresh or truncation)", engine.ErrResync, f.table)
	}
	if f.cols != nil {
		schema := renameSchema(narrowSchema(schemaOf(c, f.cols), m.huge), m.names)
		d, err := ivm.Forward(memory.DefaultAllocator, c, f.cols, schema)
		if err != nil {
			return engine.Diff{}, fmt.Errorf("update maintained query: changed rows: %w", err)
		}
		out := engine.Diff{Schema: schema}
		if d.Delete != nil {
			out.Delete = []arrow.RecordBatch{d.Delete}
		}
		if d.Insert != nil {
			out.Insert = []arrow.RecordBatch{d.Insert}
		}
		return out, nil
	}
	if _, err := t.changesInSQL(f.table); err != nil {
		return engine.Diff{}, err
	}
	// The changed rows come after a weight column: the query's columns are
	// one further on.
	rows, err := readResult(t.ctx, t.conn, f.delta, shifted(m.huge, 1), shifted(m.names, 1))
	if err != nil {
		return engine.Diff{}, fmt.Errorf("update maintained query: changed rows: %w", err)
	}
	return splitDiff(rows), nil
}

// schemaOf returns the fields cols of the changed rows' schema, in order.
func schemaOf(c *ivm.TableChanges, cols []string) *arrow.Schema {
	var s *arrow.Schema
	for _, p := range c.Parts {
		if p.Weight > 0 || s == nil {
			s = p.Rec.Schema()
		}
	}
	fields := make([]arrow.Field, len(cols))
	for i, name := range cols {
		if idx := s.FieldIndices(name); len(idx) > 0 {
			fields[i] = s.Field(idx[0])
		}
		fields[i].Name, fields[i].Nullable = name, true
	}
	return arrow.NewSchema(fields, nil)
}

// recompute evaluates the query again and compares it with the last result.
func (m *maintained) recompute(t *Tx) (engine.Diff, error) {
	next, err := m.read(t.ctx, t.conn)
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
// committed; when it rolled back, a recomputed result is dropped, and an
// in-memory state (which applied the changes) no longer matches the store:
// its subscribers take a new snapshot.
func (m *maintained) Committed(ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !ok && m.mem != nil && m.broken == nil {
		m.broken = errors.New("a transaction it applied rolled back")
	}
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
	if m.plan.views {
		return true
	}
	for _, in := range m.plan.inputs {
		if t.changes.touched[in] {
			return true
		}
	}
	return false
}

// Rows returns the maintained result.
func (m *maintained) Rows(ctx context.Context) (*engine.Result, error) {
	if m.plan.fwd != nil {
		conn, err := m.db.db.Conn(ctx)
		if err != nil {
			return nil, fmt.Errorf("read maintained result: %w", err)
		}
		defer conn.Close()
		return m.read(ctx, conn)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mem != nil {
		return m.memRows()
	}
	m.prev.Retain()
	return &engine.Result{Schema: m.prev.Schema, Records: slices.Clone(m.prev.Records), Rows: m.prev.Rows, Bytes: m.prev.Bytes}, nil
}

// memRows is the in-memory result as an engine.Result.
func (m *maintained) memRows() (*engine.Result, error) {
	rec, err := m.mem.Rows()
	if err != nil {
		return nil, fmt.Errorf("read maintained result: %w", err)
	}
	return &engine.Result{Schema: rec.Schema(), Records: []arrow.RecordBatch{rec}, Rows: rec.NumRows(), Bytes: RecordBytes(rec)}, nil
}

// read evaluates the query as readers get it (HUGEINT narrowed, DataFusion's
// names).
func (m *maintained) read(ctx context.Context, conn rawConn) (*engine.Result, error) {
	return readResult(ctx, conn, m.query, m.huge, m.names)
}

// rawConn is a connection whose driver connection can be used: a *sql.Conn
// or a transaction's.
type rawConn interface {
	Raw(func(driverConn any) error) error
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

// readResult runs query and returns its rows with the HUGEINT columns of huge
// narrowed and the columns of names renamed (both by column index).
func readResult(ctx context.Context, conn rawConn, query string, huge map[int]bool, names map[int]string) (*engine.Result, error) {
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

// Close stops maintaining the query and drops its state.
func (m *maintained) Close(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	m.release()
	for _, r := range []*engine.Result{m.prev, m.pending} {
		if r != nil {
			r.Release()
		}
	}
	m.prev, m.pending, m.mem = nil, nil, nil
	return nil
}

// release unregisters the change capture of the query's tables.
func (m *maintained) release() {
	for _, in := range m.plan.inputs {
		m.db.dropCapture(in, slices.Contains(m.plan.inSQL, in))
	}
}

// dropMaintained removes the state tables an earlier version of the runtime
// kept in a database file (subscriptions do not outlive the process).
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
