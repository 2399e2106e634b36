//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/cqrs-spice/cqrs/internal/runtime/ivm"
)

// Change capture. While a maintained query reads a table, every transaction
// keeps the rows it deletes from it and inserts into it as Arrow records in
// Go memory: the inserted rows are the ones it was given, the deleted ones
// come back from DELETE ... RETURNING. Nothing is copied inside DuckDB unless
// a maintained query reads the changes in SQL (an aggregate with expressions,
// a filtered query of one table's rows): those tables' changes go, once per
// transaction, into a temporary table of the connection (its changes table,
// made once per connection and emptied before each commit) through a kept
// appender. Operations that replace a table wholesale (a full or append
// refresh, retention, a truncation, a materialized view) mark it reset
// instead, and what reads it is computed again.

// captures is the DB's registry of tables: how many maintained queries read
// each one's changes (in memory, and in SQL), and a generation bumped when the
// table is replaced, after which its appenders and changes tables are made
// again (its columns may differ).
type captures struct {
	mu     sync.Mutex
	tables map[string]*capture
	seq    int
	// made says, per write connection (its driver connection), which
	// changes tables exist there and for which generation of their table.
	made map[any]map[string]uint64
}

type capture struct {
	name  string // the changes table's name
	refs  int    // maintained queries reading the table's changes
	inSQL int    // of them, those reading them in SQL
	gen   uint64
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

// captureName names the temporary table that holds a transaction's changes of
// table for SQL; the name stays the same for the life of the DB.
func (d *DB) captureName(table string) string {
	d.cap.mu.Lock()
	defer d.cap.mu.Unlock()
	return d.captureLocked(table).name
}

// captured reports whether table's changes are kept, and its generation.
func (d *DB) captured(table string) (bool, uint64) {
	d.cap.mu.Lock()
	defer d.cap.mu.Unlock()
	c := d.captureLocked(table)
	return c.refs > 0, c.gen
}

// generation is the table's generation.
func (d *DB) generation(table string) uint64 {
	d.cap.mu.Lock()
	defer d.cap.mu.Unlock()
	return d.captureLocked(table).gen
}

// reshaped notes that table was replaced, perhaps with other columns.
func (d *DB) reshaped(table string) {
	d.cap.mu.Lock()
	defer d.cap.mu.Unlock()
	d.captureLocked(table).gen++
}

// addCapture registers a maintained query reading table's changes (inSQL:
// in SQL over its changes table).
func (d *DB) addCapture(table string, inSQL bool) {
	d.cap.mu.Lock()
	defer d.cap.mu.Unlock()
	c := d.captureLocked(table)
	c.refs++
	if inSQL {
		c.inSQL++
	}
}

func (d *DB) dropCapture(table string, inSQL bool) {
	d.cap.mu.Lock()
	defer d.cap.mu.Unlock()
	if c := d.cap.tables[table]; c != nil && c.refs > 0 {
		c.refs--
		if inSQL && c.inSQL > 0 {
			c.inSQL--
		}
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

// forgetChanges forgets the changes tables of dc (its transaction rolled
// back, perhaps with their creation).
func (d *DB) forgetChanges(dc any) {
	d.cap.mu.Lock()
	defer d.cap.mu.Unlock()
	delete(d.cap.made, dc)
}

// txChanges is what a transaction changed, for maintained queries.
type txChanges struct {
	touched map[string]bool   // tables written
	tables  ivm.Changes       // captured tables: rows deleted and inserted, or reset
	inSQL   map[string]string // tables whose changes table this transaction filled -> its name
	made    map[string]uint64 // changes tables created in this tx -> generation
}

// touch notes that the transaction writes table; its mirror (mirror.go) no
// longer holds its rows unless the write sets it again.
func (t *Tx) touch(table string) {
	if t.changes.touched == nil {
		t.changes.touched = map[string]bool{}
	}
	t.changes.touched[strings.ToLower(table)] = true
	t.setMirror(table, nil)
}

// capturing returns the entry that keeps the table's changes in this
// transaction, or nil when no maintained query reads them.
func (t *Tx) capturing(table string) *ivm.TableChanges {
	key := strings.ToLower(table)
	t.touch(key)
	if ok, _ := t.db.captured(key); !ok {
		return nil
	}
	if t.changes.tables == nil {
		t.changes.tables = ivm.Changes{}
	}
	c := t.changes.tables[key]
	if c == nil {
		c = &ivm.TableChanges{}
		t.changes.tables[key] = c
	}
	return c
}

func (t *Tx) markReset(table string) {
	if c := t.capturing(table); c != nil {
		c.Reset = true
	}
	t.db.reshaped(strings.ToLower(table))
}

// releaseChanges drops the records a transaction captured.
func (t *Tx) releaseChanges() {
	for _, c := range t.changes.tables {
		c.Release()
	}
	t.changes.tables = nil
}

// changesInSQL returns the name of the table's changes table with this
// transaction's changes of it (weighted -1 deleted, +1 inserted), filling it
// on first use in the transaction.
func (t *Tx) changesInSQL(table string) (string, error) {
	key := strings.ToLower(table)
	if name := t.changes.inSQL[key]; name != "" {
		return name, nil
	}
	name, gen := t.db.captureName(key), t.db.generation(key)
	if g, ok := t.changes.made[name]; !(ok && g == gen) && !t.db.changesMade(t.dc, name, gen) {
		if err := t.exec(`CREATE OR REPLACE TEMP TABLE ` + name + ` AS SELECT *, 0::INTEGER AS _ivm_w FROM ` + TableIdent(table) + ` LIMIT 0`); err != nil {
			return "", fmt.Errorf("record changes of %s: %w", table, err)
		}
		if t.changes.made == nil {
			t.changes.made = map[string]uint64{}
		}
		t.changes.made[name] = gen
	}
	if c := t.changes.tables[key]; c != nil {
		for _, part := range c.Parts {
			if err := t.appendWeighted(name, gen, part.Rec, int32(part.Weight)); err != nil {
				return "", fmt.Errorf("record changes of %s: %w", table, err)
			}
		}
	}
	if t.changes.inSQL == nil {
		t.changes.inSQL = map[string]string{}
	}
	t.changes.inSQL[key] = name
	return name, nil
}

// appendWeighted appends rec's rows with weight w to a changes table.
func (t *Tx) appendWeighted(name string, gen uint64, rec arrow.RecordBatch, w int32) error {
	cols, ok := columnsOf(rec.Schema())
	if !ok {
		return t.insertArrow("temp."+name, rec, fmt.Sprintf("%d AS _ivm_w", w))
	}
	names := append(fieldNames(rec.Schema()), "_ivm_w")
	return t.conn.Raw(func(dc any) error {
		app, err := t.db.apps.get(dc.(driver.Conn), "temp."+name, names, gen)
		if err != nil {
			return err
		}
		if _, err := appendRecord(rec, cols, func(v ...driver.Value) error { return app.AppendRow(append(v, w)...) }); err != nil {
			return err
		}
		return app.Flush()
	})
}

// clearChanges empties the changes tables the transaction filled, before it
// commits, so that the next transaction on the connection finds them empty.
func (t *Tx) clearChanges() error {
	for _, name := range t.changes.inSQL {
		if _, err := t.execPrepared(`DELETE FROM temp.` + name); err != nil {
			return fmt.Errorf("clear recorded changes: %w", err)
		}
	}
	return nil
}

func fieldNames(s *arrow.Schema) []string {
	out := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		out[i] = f.Name
	}
	return out
}

// insertArrow inserts the rows of rec into table by name through DuckDB's
// Arrow scan, with extra select items after them: for column types an
// appender does not take.
func (t *Tx) insertArrow(table string, rec arrow.RecordBatch, extra string) error {
	rd, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		return err
	}
	defer rd.Release()
	sel := "*"
	if extra != "" {
		sel += ", " + extra
	}
	_, err = t.withArrow(rd, `INSERT INTO `+table+` BY NAME SELECT `+sel+` FROM {in}`, false)
	return err
}

// queryArrow runs a statement that returns rows (DELETE ... RETURNING) on a
// driver connection and returns them as records for the caller to release.
func queryArrow(ctx context.Context, dc driver.Conn, query string) ([]arrow.RecordBatch, error) {
	a, err := duckdb.NewArrowFromConn(dc)
	if err != nil {
		return nil, err
	}
	rd, err := a.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rd.Release()
	var out []arrow.RecordBatch
	for rd.Next() {
		rec := rd.RecordBatch()
		rec.Retain()
		out = append(out, rec)
	}
	if err := rd.Err(); err != nil {
		for _, r := range out {
			r.Release()
		}
		return nil, err
	}
	return out, nil
}
