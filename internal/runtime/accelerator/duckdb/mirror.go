//go:build duckdb_arrow

package duckdb

import (
	"fmt"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/ivm"
)

// A small table that a subscription keeps (ApplyDiff) is also held in memory,
// whole: its mirror. A diff is then applied to the mirror, and the table
// written again from it with two prepared statements (a DELETE of every row,
// an INSERT of the rows), where retracting rows in SQL takes DuckDB a
// millisecond or more to plan for every transaction (matching equal rows,
// counting them, failing when too few are held). The mirror is made by
// Replace from a snapshot of at most maxMirrorRows rows, follows every
// ApplyDiff of the table while it stays that small, and is dropped by any
// other write to the table; a table without one takes the SQL path.

// maxMirrorRows bounds the rows of a mirrored table.
const maxMirrorRows = 1024

// mirror is a table's rows as a multiset.
type mirror struct {
	schema *arrow.Schema
	rows   map[string]*mirrorRow
	n      int64
}

type mirrorRow struct {
	row ivm.Row
	n   int64
}

// mirrors are the DB's committed mirrors, by table (lower case).
type mirrors struct {
	mu sync.Mutex
	m  map[string]*mirror
}

func (ms *mirrors) get(table string) *mirror {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return ms.m[table]
}

// set publishes a committed transaction's mirrors (nil: dropped).
func (ms *mirrors) set(changed map[string]*mirror) {
	if len(changed) == 0 {
		return
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.m == nil {
		ms.m = map[string]*mirror{}
	}
	for t, m := range changed {
		if m == nil {
			delete(ms.m, t)
		} else {
			ms.m[t] = m
		}
	}
}

// mirrorOf returns the table's mirror as of this transaction (nil: none).
func (t *Tx) mirrorOf(table string) *mirror {
	key := strings.ToLower(table)
	if m, ok := t.mirrors[key]; ok {
		return m
	}
	return t.db.mirrors.get(key)
}

// setMirror records the table's mirror for this transaction (nil drops it).
func (t *Tx) setMirror(table string, m *mirror) {
	key := strings.ToLower(table)
	if m == nil && t.mirrors[key] == nil && t.db.mirrors.get(key) == nil {
		if _, ok := t.mirrors[key]; !ok {
			return
		}
	}
	if t.mirrors == nil {
		t.mirrors = map[string]*mirror{}
	}
	t.mirrors[key] = m
}

// add adds the rows of recs to the mirror, or retracts them (sign -1); rows
// retracted that the mirror does not hold are an error, as the SQL path's: the
// table no longer matches its source.
func (m *mirror) add(recs []arrow.RecordBatch, sign int64) error {
	type count struct {
		row ivm.Row
		n   int64
	}
	byKey := map[string]*count{}
	for _, rec := range recs {
		rows, err := ivm.Rows(rec, identityCols(int(rec.NumCols())))
		if err != nil {
			return err
		}
		for _, r := range rows {
			k := ivm.Key(r)
			if c := byKey[k]; c != nil {
				c.n++
			} else {
				byKey[k] = &count{row: r, n: 1}
			}
		}
	}
	for k, c := range byKey {
		e := m.rows[k]
		switch {
		case sign > 0 && e == nil:
			m.rows[k] = &mirrorRow{row: c.row, n: c.n}
		case sign > 0:
			e.n += c.n
		case e == nil || e.n < c.n:
			held := int64(0)
			if e != nil {
				held = e.n
			}
			return fmt.Errorf("%d rows were retracted but only %d equal rows are held; the local table no longer matches its source: subscribe again for a new snapshot", c.n, held)
		case e.n == c.n:
			delete(m.rows, k)
		default:
			e.n -= c.n
		}
		m.n += sign * c.n
	}
	return nil
}

func (m *mirror) clone() *mirror {
	c := &mirror{schema: m.schema, rows: make(map[string]*mirrorRow, len(m.rows)), n: m.n}
	for k, r := range m.rows {
		c.rows[k] = &mirrorRow{row: r.row, n: r.n}
	}
	return c
}

// record is the mirror's rows as one record.
func (m *mirror) record() (arrow.RecordBatch, error) {
	rows := make([]ivm.Row, 0, m.n)
	for _, r := range m.rows {
		for range r.n {
			rows = append(rows, r.row)
		}
	}
	return ivm.Build(memory.DefaultAllocator, m.schema, rows)
}

func identityCols(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// mirrorable reports whether a table of schema can be mirrored: its rows go
// back into it through an INSERT or an appender, and their values are kept
// by package ivm.
func mirrorable(s *arrow.Schema) bool {
	if _, ok := columnsOf(s); !ok || s.NumFields() == 0 {
		return false
	}
	for _, f := range s.Fields() {
		if !ivm.Supported(f.Type) {
			return false
		}
	}
	return true
}

// applyDiffMirrored applies a diff through the table's mirror; it reports
// false (having changed nothing) when the table has no mirror or would grow
// past maxMirrorRows.
func (t *Tx) applyDiffMirrored(table string, m *mirror, capture *ivm.TableChanges, del, ins []arrow.RecordBatch) (bool, error) {
	next := m.clone()
	if err := next.add(del, -1); err != nil {
		return false, fmt.Errorf("retract rows of %s: %w", table, err)
	}
	if err := next.add(ins, 1); err != nil {
		return false, err
	}
	if next.n > maxMirrorRows {
		t.setMirror(table, nil)
		return false, nil
	}
	rec, err := next.record()
	if err != nil {
		return false, err
	}
	defer rec.Release()
	deleted, err := t.execPrepared(`DELETE FROM ` + TableIdent(table))
	if err != nil {
		return false, fmt.Errorf("rewrite %s: %w", table, err)
	}
	t.deleted += deleted
	if err := t.insertRecords(table, m.schema, []arrow.RecordBatch{rec}); err != nil {
		return false, fmt.Errorf("rewrite %s: %w", table, err)
	}
	if capture != nil {
		capture.Add(-1, del...)
		capture.Add(1, ins...)
	}
	t.setMirror(table, next)
	return true, nil
}

// mirroring passes a snapshot's records to DuckDB and keeps them while they
// hold at most maxMirrorRows rows, for Replace to make the table's mirror.
type mirroring struct {
	array.RecordReader
	recs []arrow.RecordBatch
	rows int64
	over bool
}

func (r *mirroring) Next() bool {
	if !r.RecordReader.Next() {
		return false
	}
	if !r.over {
		rec := r.RecordReader.RecordBatch()
		r.rows += rec.NumRows()
		if r.rows > maxMirrorRows {
			r.over = true
			releaseAll(r.recs)
			r.recs = nil
		} else {
			rec.Retain()
			r.recs = append(r.recs, rec)
		}
	}
	return true
}

// mirror makes the mirror of what was read, or nil when it was too large.
func (r *mirroring) mirror() (*mirror, error) {
	defer releaseAll(r.recs)
	if r.over || !mirrorable(r.Schema()) {
		return nil, nil
	}
	m := &mirror{schema: r.Schema(), rows: map[string]*mirrorRow{}}
	if err := m.add(r.recs, 1); err != nil {
		return nil, err
	}
	return m, nil
}

var _ engine.StoreTx = (*Tx)(nil)
