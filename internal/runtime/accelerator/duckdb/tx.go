//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// Tx is one write transaction on one connection. Every method but Commit and
// Rollback may be called any number of times; nothing is visible to readers until
// Commit. A Tx is not safe for concurrent use.
type Tx struct {
	ctx     context.Context
	conn    *txConn     // starts the DuckDB transaction on first use (txconn.go)
	raw     *sql.Conn   // the connection itself
	dc      any         // its driver connection: what its temporary tables belong to
	begun   bool        // the DuckDB transaction has started
	kept    *keptInsert // the first INSERT, kept back (txconn.go)
	done    bool
	db      *DB
	changes txChanges               // for maintained queries (capture.go)
	wm      map[string]position.LSN // watermarks set, published at commit
	mirrors map[string]*mirror      // tables' mirrors set or dropped (nil), published at commit
	deleted int64                   // rows this transaction deleted (compaction.go)
}

var viewSeq atomic.Uint64

// Begin starts a write transaction.
func (d *DB) Begin(ctx context.Context) (*Tx, error) {
	conn, err := d.wdb.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("get connection: %w", err)
	}
	var dc any
	_ = conn.Raw(func(c any) error { dc = c; return nil })
	t := &Tx{ctx: ctx, raw: conn, dc: dc, db: d}
	t.conn = &txConn{t: t, c: conn}
	return t, nil
}

// Commit makes every change of the transaction visible at once, and the
// watermarks it set with them.
func (t *Tx) Commit() error {
	if t.done {
		return fmt.Errorf("commit: transaction already ended")
	}
	t.done = true
	defer t.raw.Close()
	defer t.releaseChanges()
	if !t.begun {
		// At most one statement: it runs outside a DuckDB transaction and
		// commits on its own. Marked begun so that it does not begin one.
		t.begun = true
		if err := t.runKept(); err != nil {
			t.db.apps.drop(t.dc)
			return fmt.Errorf("commit: %w", err)
		}
	} else {
		if err := t.clearChanges(); err != nil {
			t.abort()
			return fmt.Errorf("commit: %w", err)
		}
		if _, err := t.execPrepared("COMMIT"); err != nil {
			t.abort()
			return fmt.Errorf("commit: %w", err)
		}
	}
	if len(t.changes.made) > 0 {
		t.db.madeChanges(t.dc, t.changes.made)
	}
	t.db.wm.set(t.wm)
	t.db.mirrors.set(t.mirrors)
	t.changes = txChanges{}
	t.db.compactAfter(t.ctx, t.raw, t.deleted)
	return nil
}

// abort rolls the transaction back after a failure and forgets what the
// connection kept for it (appenders with rows not flushed, changes tables
// the transaction created).
func (t *Tx) abort() {
	if t.begun {
		_, _ = t.raw.ExecContext(context.Background(), "ROLLBACK")
	}
	t.db.apps.drop(t.dc)
	t.db.forgetChanges(t.dc)
}

// Update runs fn in one transaction and commits it when fn returns nil.
func (d *DB) Update(ctx context.Context, fn func(engine.StoreTx) error) error {
	tx, err := d.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

var (
	_ engine.Store   = (*DB)(nil)
	_ engine.StoreTx = (*Tx)(nil)
)

// Rollback discards the transaction; it is a no-op after Commit.
func (t *Tx) Rollback() {
	if t.done {
		return
	}
	t.done = true
	t.abort()
	t.releaseChanges()
	if t.kept != nil {
		releaseAll(t.kept.recs)
		t.kept = nil
	}
	t.raw.Close()
}

// withArrow exposes rd on the transaction's connection, runs query (which refers to
// it as {in}) and returns the affected row count. The caller keeps ownership of rd.
//
// DuckDB pushes column projections into Arrow scans, but a registered Go stream
// always yields every column, so any query that does not read all columns in order
// would read the wrong ones. Only a plain "SELECT * FROM {in}" may read the stream
// directly (copyFirst is false); everything else reads a temporary copy.
func (t *Tx) withArrow(rd array.RecordReader, query string, copyFirst bool) (int64, error) {
	var n int64
	err := t.withStream(rd, copyFirst, func(dc driver.Conn, in string) error {
		res, err := dc.(driver.ExecerContext).ExecContext(t.ctx, strings.ReplaceAll(query, "{in}", in), nil)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}

// withStream exposes rd on the transaction's connection under a name (a
// temporary copy when copyFirst) and runs fn with that name.
//
// The stream is registered under one name per connection, which each
// registration replaces (DuckDB's Arrow scan views are temporary views created
// with OR REPLACE), so no statement drops it afterwards; nothing reads the name
// but the statement that follows its registration.
func (t *Tx) withStream(rd array.RecordReader, copyFirst bool, fn func(dc driver.Conn, in string) error) error {
	return t.conn.Raw(func(dc any) error {
		a, err := duckdb.NewArrowFromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		exec := dc.(driver.ExecerContext)
		const stream = "_spice_stream"
		release, err := a.RegisterView(rd, stream) // the export holds its own reference
		if err != nil {
			return err
		}
		defer release()
		in := stream
		if copyFirst {
			in = fmt.Sprintf("_spice_in_%d", viewSeq.Add(1))
			if _, err := exec.ExecContext(t.ctx, "CREATE TEMP TABLE "+in+" AS SELECT * FROM "+stream, nil); err != nil {
				return err
			}
			defer exec.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+in, nil)
		}
		return fn(dc.(driver.Conn), in)
	})
}

// Replace replaces the whole table with the rows of rd (creating it, or changing
// its columns to rd's schema).
func (t *Tx) Replace(table string, rd array.RecordReader) (int64, error) {
	t.markReset(table)
	if err := t.ensureSchema(table); err != nil {
		return 0, err
	}
	kept := &mirroring{RecordReader: rd}
	_, err := t.withArrow(kept, `CREATE OR REPLACE TABLE `+TableIdent(table)+` AS SELECT * FROM {in}`, false)
	if err != nil {
		releaseAll(kept.recs)
		return 0, fmt.Errorf("replace %s: %w", table, err)
	}
	m, err := kept.mirror()
	if err != nil {
		return 0, fmt.Errorf("replace %s: %w", table, err)
	}
	t.setMirror(table, m)
	return t.count(table)
}

// Materialize replaces the whole table with the result of query (accelerated views).
func (t *Tx) Materialize(table, query string) (int64, error) {
	t.markReset(table)
	if err := t.ensureSchema(table); err != nil {
		return 0, err
	}
	_, err := t.conn.ExecContext(t.ctx, `CREATE OR REPLACE TABLE `+TableIdent(table)+` AS `+query)
	if err != nil {
		return 0, fmt.Errorf("materialize %s: %w", table, err)
	}
	return t.count(table)
}

func (t *Tx) count(table string) (int64, error) {
	var n int64
	if err := t.conn.QueryRowContext(t.ctx, `SELECT count(*) FROM `+TableIdent(table)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count rows of %s: %w", table, err)
	}
	return n, nil
}

// Append inserts the rows of rd that the table does not hold yet (see
// AppendOptions), creating the table when it does not exist.
func (t *Tx) Append(table string, rd array.RecordReader, opt engine.AppendOptions) (int64, error) {
	exists, err := t.tableExists(table)
	if err != nil {
		return 0, err
	}
	if !exists {
		return t.Replace(table, rd)
	}
	t.markReset(table)
	var query string
	tbl := TableIdent(table)
	switch {
	case len(opt.Key) > 0 && opt.Upsert:
		query = `DELETE FROM ` + tbl + ` WHERE rowid IN (` + keyRowids(tbl, "{in}", opt.Key) + `); INSERT INTO ` + tbl + ` SELECT * FROM {in}`
	case len(opt.Key) > 0:
		query = `INSERT INTO ` + tbl + ` SELECT * FROM {in} i WHERE NOT EXISTS (SELECT 1 FROM ` + tbl + ` t WHERE ` + keyMatch("t", "i", opt.Key) + `)`
	case opt.Column != "" && opt.Since != nil:
		lit, err := engine.Literal(opt.Since)
		if err != nil {
			return 0, err
		}
		query = `INSERT INTO ` + tbl + ` (SELECT * FROM {in} EXCEPT ALL SELECT * FROM ` + tbl + ` WHERE ` + Ident(opt.Column) + ` >= ` + lit + `)`
	default:
		query = `INSERT INTO ` + tbl + ` SELECT * FROM {in}`
	}
	n, err := t.withArrow(rd, query, true)
	if err != nil {
		return 0, fmt.Errorf("append to %s: %w", table, err)
	}
	return n, nil
}

// Delete removes the rows whose key columns equal a row of keys (which holds only
// the key columns). The rows removed are kept for maintained queries that
// read the table.
func (t *Tx) Delete(table string, keys array.RecordReader) (int64, error) {
	cols := fieldNames(keys.Schema())
	tbl := TableIdent(table)
	capture := t.capturing(table)
	var n int64
	err := t.withStream(keys, true, func(dc driver.Conn, in string) error {
		query := `DELETE FROM ` + tbl + ` WHERE rowid IN (` + keyRowids(tbl, in, cols) + `)`
		if capture == nil {
			res, err := dc.(driver.ExecerContext).ExecContext(t.ctx, query, nil)
			if err == nil {
				n, _ = res.RowsAffected()
				t.deleted += n
			}
			return err
		}
		recs, err := queryArrow(t.ctx, dc, query+` RETURNING *`)
		for _, r := range recs {
			n += r.NumRows()
		}
		t.deleted += n
		capture.Add(-1, recs...)
		releaseAll(recs)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("delete from %s: %w", table, err)
	}
	return n, nil
}

// maxPreparedRows is the most rows an INSERT takes as parameters of one
// prepared statement; more go through the table's kept appender. Flushing an
// appender costs DuckDB a few tenths of a millisecond whatever it holds: in
// BenchmarkMaintainedOrders a transaction of 32 new orders took 435 us of CPU
// with a prepared INSERT and 528 through the appender, of 64 orders 762 and
// 943, of 100 orders 1,200 and 1,066.
const maxPreparedRows = 64

// Insert inserts every row of rows, matching columns by name: a few rows as
// parameters of a prepared INSERT, more through the connection's kept
// appender of the table, and column types neither takes through DuckDB's
// Arrow scan. The rows are kept for maintained queries that read the table.
func (t *Tx) Insert(table string, rows array.RecordReader) (int64, error) {
	capture := t.capturing(table)
	recs, err := readAll(rows)
	defer releaseAll(recs)
	if err != nil {
		return 0, fmt.Errorf("insert into %s: %w", table, err)
	}
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	if _, ok := columnsOf(rows.Schema()); ok && t.keep(table, rows.Schema(), recs) {
		if capture != nil {
			capture.Add(1, recs...)
		}
		return n, nil
	}
	if err := t.begin(); err != nil {
		return 0, err
	}
	if err := t.insertRecords(table, rows.Schema(), recs); err != nil {
		return 0, fmt.Errorf("insert into %s: %w", table, err)
	}
	if capture != nil {
		capture.Add(1, recs...)
	}
	return n, nil
}

// insertRecords inserts the rows of recs: a few as parameters of a prepared
// INSERT, more through the kept appender, types neither takes through
// DuckDB's Arrow scan.
func (t *Tx) insertRecords(table string, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	if n == 0 {
		return nil
	}
	cols, ok := columnsOf(schema)
	switch {
	case !ok:
		var err error
		for _, rec := range recs {
			err = errors.Join(err, t.insertArrow(TableIdent(table), rec, ""))
		}
		return err
	case n <= maxPreparedRows:
		return t.insertPrepared(table, schema, recs, cols, n)
	default:
		return t.insertAppended(table, schema, recs, cols)
	}
}

// insertPrepared inserts n rows as the parameters of one prepared INSERT
// (prepared once per connection, table and row count: it reads no table, so
// its plan cannot go stale).
func (t *Tx) insertPrepared(table string, schema *arrow.Schema, recs []arrow.RecordBatch, cols []column, n int64) error {
	names := make([]string, len(cols))
	for i, f := range schema.Fields() {
		names[i] = Ident(f.Name)
	}
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	query := `INSERT INTO ` + TableIdent(table) + ` (` + strings.Join(names, ", ") + `) VALUES ` +
		strings.TrimSuffix(strings.Repeat(tuple+", ", int(n)), ", ")
	args := make([]any, 0, int(n)*len(cols))
	for _, rec := range recs {
		_, err := appendRecord(rec, cols, func(v ...driver.Value) error {
			for _, x := range v {
				if d, ok := x.(duckdb.Decimal); ok {
					x = decimalText(d) // DuckDB binds no DECIMAL parameter; it casts text exactly
				}
				args = append(args, x)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	_, err := t.execPrepared(query, args...)
	return err
}

// decimalText writes a decimal as text: the unscaled digits with the point
// Scale places from the right.
func decimalText(d duckdb.Decimal) string {
	digits := new(big.Int).Abs(d.Value).String()
	sign := ""
	if d.Value.Sign() < 0 {
		sign = "-"
	}
	if d.Scale == 0 {
		return sign + digits
	}
	if pad := int(d.Scale) + 1 - len(digits); pad > 0 {
		digits = strings.Repeat("0", pad) + digits
	}
	cut := len(digits) - int(d.Scale)
	return sign + digits[:cut] + "." + digits[cut:]
}

// insertAppended inserts the records through the connection's kept appender
// of the table's columns.
func (t *Tx) insertAppended(table string, schema *arrow.Schema, recs []arrow.RecordBatch, cols []column) error {
	return t.conn.Raw(func(dc any) error {
		key := strings.ToLower(table)
		app, err := t.db.apps.get(dc.(driver.Conn), key, fieldNames(schema), t.db.generation(key))
		if err != nil {
			return err
		}
		for _, rec := range recs {
			if _, err := appendRecord(rec, cols, app.AppendRow); err != nil {
				return err
			}
		}
		return app.FlushWithCancel(t.ctx)
	})
}

// exec runs a statement inside the transaction.
func (t *Tx) exec(query string, args ...any) error {
	_, err := t.conn.ExecContext(t.ctx, query, args...)
	return err
}

// SetWatermark records lsn as the source position of each dataset's data,
// committed with it. The DB keeps the watermarks in memory, published when the
// transaction commits; a file database also stores them, in the same
// transaction as the data, for a restart to resume from. One UPDATE covers
// every dataset, and rows are inserted only when some are missing.
func (t *Tx) SetWatermark(lsn position.LSN, datasets ...string) error {
	if len(datasets) == 0 {
		return nil
	}
	if t.wm == nil {
		t.wm = map[string]position.LSN{}
	}
	for _, d := range datasets {
		t.wm[d] = lsn
	}
	if t.db.Path == "" {
		return nil
	}
	in := strings.TrimSuffix(strings.Repeat("?, ", len(datasets)), ", ")
	args := make([]any, 0, 2*len(datasets))
	args = append(args, uint64(lsn))
	for _, d := range datasets {
		args = append(args, d)
	}
	n, err := t.execPrepared(`UPDATE _spice.watermarks SET lsn = ?, updated_at = now() WHERE dataset IN (`+in+`)`, args...)
	if err == nil {
		if n == int64(len(datasets)) {
			return nil
		}
		values := strings.TrimSuffix(strings.Repeat("(?, ?, now()), ", len(datasets)), ", ")
		args = args[:0]
		for _, d := range datasets {
			args = append(args, d, uint64(lsn))
		}
		_, err = t.conn.ExecContext(t.ctx, `INSERT OR REPLACE INTO _spice.watermarks VALUES `+values, args...)
	}
	if err != nil {
		return fmt.Errorf("set watermark of %s: %w", strings.Join(datasets, ", "), err)
	}
	return nil
}

// TableExists reports whether table exists as seen by this transaction.
func (t *Tx) TableExists(table string) (bool, error) { return t.tableExists(table) }

func (t *Tx) tableExists(table string) (bool, error) {
	var n int
	schema, name := splitTable(table)
	err := t.conn.QueryRowContext(t.ctx,
		`SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = ?`, schema, name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look up table %s: %w", table, err)
	}
	return n > 0, nil
}

// keyRowids selects the rowids of tbl's rows whose key columns equal those of a
// row of in, NULL matching NULL. Rows without a NULL key are matched by plain
// equality, which lets DuckDB push the keys' range into the scan of tbl as a
// dynamic filter and skip the row groups outside it (a few rows read instead of
// the whole table: keys such as a bigserial are clustered by insertion); IS NOT
// DISTINCT FROM gets no such filter and reads every row. Rows with a NULL key
// column are matched apart, restricted to such rows, which the scan skips by
// the row groups' null statistics.
func keyRowids(tbl, in string, cols []string) string {
	eq := make([]string, len(cols))
	null := make([]string, len(cols))
	for i, c := range cols {
		eq[i] = "t." + Ident(c) + " = k." + Ident(c)
		null[i] = "t." + Ident(c) + " IS NULL"
	}
	return `SELECT t.rowid FROM ` + tbl + ` t JOIN ` + in + ` k ON ` + strings.Join(eq, " AND ") +
		` UNION ALL SELECT t.rowid FROM ` + tbl + ` t JOIN ` + in + ` k ON ` + keyMatch("t", "k", cols) +
		` WHERE ` + strings.Join(null, " OR ")
}

func keyMatch(a, b string, cols []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = a + "." + Ident(c) + " IS NOT DISTINCT FROM " + b + "." + Ident(c)
	}
	return strings.Join(parts, " AND ")
}

// Ident quotes an identifier for DuckDB: engine.Ident, the one quoting of the
// runtime's SQL, under the accelerator's name.
func Ident(name string) string { return engine.Ident(name) }
