package cdc

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pglogrepl"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// value is one column of a row image: kind is 'n' (NULL), 'b' (binary data) or
// 'u' (an unchanged TOASTed value that pgoutput does not send).
type value struct {
	kind byte
	data []byte
}

// row is the final image of a row in a batch. from, when set, is the key of the
// local row (as it was before the batch) that its 'u' values are taken from.
type row struct {
	vals []value
	from []value
}

// changes are one table's net changes in a batch: after deleting the rows that
// existed before the batch and changed in it, inserting the final rows gives the
// table's state at the batch's end.
type changes struct {
	truncated bool               // the table was emptied first
	seen      map[string]bool    // every key changed in the batch
	existed   map[string][]value // key -> key values of rows changed that existed before the batch
	final     map[string]*row    // key -> row image at the end; absent: deleted
}

// old notes a change to a row that exists: if the batch had not seen its key
// before, the row is in the local table and must be deleted.
func (c *changes) old(k string, kv []value) {
	if !c.seen[k] {
		c.seen[k] = true
		c.existed[k] = kv
	}
}

// born notes a row that did not exist (an insert, or a key change's new key): a
// key unseen so far is not in the local table, as Postgres would have refused the
// duplicate, so it needs no delete.
func (c *changes) born(k string) { c.seen[k] = true }

// batch nets the row changes of whole transactions per key (last write wins, an
// insert then a delete cancels out) until they are applied together.
type batch struct {
	mem     memory.Allocator
	tables  map[*table]*changes
	order   []*table
	changes int          // row changes buffered
	pos     position.LSN // end of the last transaction or heartbeat seen
	at      time.Time    // its source time
}

func newBatch(mem memory.Allocator) *batch {
	return &batch{mem: mem, tables: map[*table]*changes{}}
}

func (b *batch) of(t *table) *changes {
	c := b.tables[t]
	if c == nil {
		c = &changes{seen: map[string]bool{}, existed: map[string][]value{}, final: map[string]*row{}}
		b.tables[t] = c
		b.order = append(b.order, t)
	}
	return c
}

// advance moves the batch's position to the end of a transaction or a heartbeat.
func (b *batch) advance(pos position.LSN, at time.Time) {
	if pos > b.pos {
		b.pos = pos
		if !at.IsZero() {
			b.at = at
		}
	}
}

func (b *batch) insert(t *table, tuple *pglogrepl.TupleData) error {
	vals, err := t.values(tuple, "insert")
	if err != nil {
		return err
	}
	k, _, err := t.keyOf(vals, nil)
	if err != nil {
		return err
	}
	c := b.of(t)
	c.born(k)
	c.final[k] = &row{vals: vals}
	b.changes++
	return nil
}

// update records the new image under the new key. A key change removes the old
// key. Unchanged TOASTed values come from the row's earlier image in this batch,
// else from a full old image (REPLICA IDENTITY FULL), else from the local row.
func (b *batch) update(t *table, m *pglogrepl.UpdateMessage) error {
	vals, err := t.values(m.NewTuple, "update")
	if err != nil {
		return err
	}
	var old []value
	if m.OldTuple != nil {
		if old, err = t.values(m.OldTuple, "update"); err != nil {
			return err
		}
	}
	newKey, newKV, err := t.keyOf(vals, old)
	if err != nil {
		return err
	}
	oldKey, oldKV := newKey, newKV
	if old != nil {
		if oldKey, oldKV, err = t.keyOf(old, nil); err != nil {
			return err
		}
	}
	c := b.of(t)
	prev := c.final[oldKey]
	c.old(oldKey, oldKV)
	if oldKey != newKey {
		delete(c.final, oldKey)
		c.born(newKey)
	}
	r := &row{vals: vals}
	for i, v := range vals {
		if v.kind != 'u' {
			continue
		}
		switch {
		case prev != nil:
			r.vals[i] = prev.vals[i]
			if prev.vals[i].kind == 'u' {
				r.from = prev.from
			}
		case m.OldTupleType == pglogrepl.UpdateMessageTupleTypeOld && old[i].kind == 'b':
			r.vals[i] = old[i]
		default:
			r.from = oldKV
		}
	}
	c.final[newKey] = r
	b.changes++
	return nil
}

func (b *batch) delete(t *table, tuple *pglogrepl.TupleData) error {
	old, err := t.values(tuple, "delete")
	if err != nil {
		return err
	}
	k, kv, err := t.keyOf(old, nil)
	if err != nil {
		return err
	}
	c := b.of(t)
	c.old(k, kv)
	delete(c.final, k)
	b.changes++
	return nil
}

func (b *batch) truncate(t *table) {
	c := b.of(t)
	c.truncated = true
	clear(c.seen)
	clear(c.existed)
	clear(c.final)
	b.changes++
}

// values converts a tuple of the stream, checked against the table's columns.
func (t *table) values(tuple *pglogrepl.TupleData, op string) ([]value, error) {
	if tuple == nil || len(tuple.Columns) != len(t.cols) {
		return nil, fmt.Errorf("dataset %s: %s of %s carries %d columns, want %d", t.Dataset, op, t.ident(), columnsOf(tuple), len(t.cols))
	}
	vals := make([]value, len(t.cols))
	for i, c := range tuple.Columns {
		switch c.DataType {
		case pglogrepl.TupleDataTypeNull, pglogrepl.TupleDataTypeToast:
			vals[i] = value{kind: c.DataType}
		case pglogrepl.TupleDataTypeBinary:
			vals[i] = value{kind: 'b', data: c.Data}
		default:
			return nil, fmt.Errorf("dataset %s: column %q of %s arrived in text format; its type has no binary form, which refresh_mode changes needs: change the column's type or use refresh_mode full",
				t.Dataset, t.cols[i].name, t.ident())
		}
	}
	return vals, nil
}

func columnsOf(tuple *pglogrepl.TupleData) int {
	if tuple == nil {
		return 0
	}
	return len(tuple.Columns)
}

// keyOf returns a row image's key as a map key and as values. A key value that
// was not sent (unchanged and TOASTed) is taken from old when given.
func (t *table) keyOf(vals, old []value) (string, []value, error) {
	kv := make([]value, len(t.key))
	var buf []byte
	for i, name := range t.key {
		j := t.column(name)
		v := vals[j]
		if v.kind == 'u' && old != nil {
			v = old[j]
		}
		if v.kind == 'u' {
			return "", nil, fmt.Errorf("dataset %s: key column %q of %s arrived without its value (an unchanged TOASTed value): run ALTER TABLE %s REPLICA IDENTITY FULL",
				t.Dataset, name, t.ident(), t.ident())
		}
		kv[i] = v
		buf = append(buf, v.kind)
		buf = binary.AppendUvarint(buf, uint64(len(v.data)))
		buf = append(buf, v.data...)
	}
	return string(buf), kv, nil
}

// column returns the index of the named column; the key's columns always exist
// (describe checked them).
func (t *table) column(name string) int {
	for i, c := range t.cols {
		if c.name == name {
			return i
		}
	}
	panic("cdc: no column " + name + " in " + t.ident())
}
