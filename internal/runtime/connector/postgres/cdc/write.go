package cdc

import (
	"fmt"
	"log/slog"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// apply writes the batch into one store transaction, table by table, as Arrow
// batches: the changed rows that existed are deleted and the final rows
// inserted; rows whose unchanged TOASTed values live only in the local table
// are completed from it by the store.
func (b *batch) apply(tx engine.StoreTx, log *slog.Logger) error {
	for _, t := range b.order {
		if err := b.tables[t].apply(tx, t, b.mem, log); err != nil {
			return fmt.Errorf("apply changes to %s: %w", t.Dataset, err)
		}
	}
	return nil
}

func (c *changes) apply(tx engine.StoreTx, t *table, mem memory.Allocator, log *slog.Logger) error {
	var readers []array.RecordReader
	defer func() {
		for _, rd := range readers {
			rd.Release()
		}
	}()
	read := func(cols []column, idx []int, rows [][]value) (array.RecordReader, error) {
		rd, err := newReader(mem, cols, idx, rows)
		if err != nil {
			return nil, err
		}
		readers = append(readers, rd)
		return rd, nil
	}
	ch := engine.Changes{Truncate: c.truncated, Key: t.key}
	var complete []*row
	partial := map[string][]*row{} // by the set of columns to complete
	for _, r := range c.final {
		if r.from == nil {
			complete = append(complete, r)
			continue
		}
		partial[unsentMask(r)] = append(partial[unsentMask(r)], r)
	}
	for _, rows := range partial {
		log.Debug("completing unchanged TOASTed values from the local table", logDataset, t.Dataset, "rows", len(rows))
		cols, idx, vals := t.toComplete(rows)
		rd, err := read(cols, idx, vals)
		if err != nil {
			return err
		}
		ch.Complete = append(ch.Complete, rd)
	}
	if len(c.existed) > 0 {
		keys := make([][]value, 0, len(c.existed))
		for _, kv := range c.existed {
			keys = append(keys, kv)
		}
		rd, err := read(t.keyColumns(), identity(len(t.key)), keys)
		if err != nil {
			return err
		}
		ch.Delete = rd
	}
	if len(complete) > 0 {
		rows := make([][]value, len(complete))
		for i, r := range complete {
			rows[i] = r.vals
		}
		rd, err := read(t.cols, identity(len(t.cols)), rows)
		if err != nil {
			return err
		}
		ch.Insert = rd
	}
	return tx.ApplyChanges(t.Dataset, ch)
}

// toComplete lays out rows sharing one set of unsent columns for
// engine.Changes.Complete: the sent columns, then the key of the local row the
// unsent values come from (the row's earlier key, r.from).
func (t *table) toComplete(rows []*row) (cols []column, idx []int, vals [][]value) {
	var sent []int
	for i, v := range rows[0].vals {
		if v.kind != 'u' {
			sent = append(sent, i)
		}
	}
	cols = make([]column, 0, len(sent)+len(t.key))
	for _, i := range sent {
		cols = append(cols, t.cols[i])
	}
	idx = append(idx, sent...)
	for i, k := range t.key {
		c := t.cols[t.column(k)]
		c.name = fmt.Sprintf("_cdc_from_%d", i)
		cols = append(cols, c)
		idx = append(idx, len(t.cols)+i)
	}
	vals = make([][]value, len(rows))
	for i, r := range rows {
		vals[i] = append(append([]value(nil), r.vals...), r.from...)
	}
	return cols, idx, vals
}

// unsentMask names the set of columns a row lacks.
func unsentMask(r *row) string {
	b := make([]byte, len(r.vals))
	for i, v := range r.vals {
		b[i] = '0'
		if v.kind == 'u' {
			b[i] = '1'
		}
	}
	return string(b)
}

func (t *table) keyColumns() []column {
	out := make([]column, len(t.key))
	for i, k := range t.key {
		out[i] = t.cols[t.column(k)]
	}
	return out
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// newReader builds one Arrow record batch with cols, taking column j from
// position idx[j] of each row, and returns a reader over it for the caller to
// release.
func newReader(mem memory.Allocator, cols []column, idx []int, rows [][]value) (array.RecordReader, error) {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.codec.Type, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	bld := array.NewRecordBuilder(mem, schema)
	defer bld.Release()
	appenders := make([]func([]byte) error, len(cols))
	for i, c := range cols {
		appenders[i] = c.codec.Appender(bld.Field(i))
	}
	for _, r := range rows {
		for j, i := range idx {
			v := r[i]
			if v.kind != 'b' {
				bld.Field(j).AppendNull()
				continue
			}
			if err := appenders[j](v.data); err != nil {
				return nil, fmt.Errorf("column %q: %w", cols[j].name, err)
			}
		}
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	return array.NewRecordReader(schema, []arrow.RecordBatch{rec})
}
