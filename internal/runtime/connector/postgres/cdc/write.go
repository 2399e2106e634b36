package cdc

import (
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// stageSeq names staging tables uniquely within a process.
var stageSeq atomic.Uint64

// apply writes the batch into one store transaction, table by table: rows whose
// unchanged TOASTed values live only in the local table are completed from it
// first, then the changed rows that existed are deleted and the final rows
// inserted, all as Arrow batches.
func (b *batch) apply(tx engine.StoreTx, log *slog.Logger) error {
	for _, t := range b.order {
		if err := b.tables[t].apply(tx, t, b.mem, log); err != nil {
			return fmt.Errorf("apply changes to %s: %w", t.Dataset, err)
		}
	}
	return nil
}

func (c *changes) apply(tx engine.StoreTx, t *table, mem memory.Allocator, log *slog.Logger) error {
	var complete []*row
	partial := map[string][]*row{} // by the set of columns to complete
	for _, r := range c.final {
		if r.from == nil {
			complete = append(complete, r)
			continue
		}
		partial[unsentMask(r)] = append(partial[unsentMask(r)], r)
	}
	var staged []*stage
	defer func() {
		for _, s := range staged {
			_ = tx.Exec("DROP TABLE IF EXISTS " + s.name)
		}
	}()
	for _, rows := range partial {
		log.Debug("completing unchanged TOASTed values from the local table", logDataset, t.Dataset, "rows", len(rows))
		s, err := newStage(tx, t, rows, mem)
		if err != nil {
			return err
		}
		staged = append(staged, s)
	}
	target := duckIdent(t.Dataset)
	if c.truncated {
		if err := tx.Exec("DELETE FROM " + target); err != nil {
			return err
		}
	}
	if len(c.existed) > 0 {
		keys := make([][]value, 0, len(c.existed))
		for _, kv := range c.existed {
			keys = append(keys, kv)
		}
		if err := withRecord(mem, t.keyColumns(), identity(len(t.key)), keys, func(rd array.RecordReader) error {
			_, err := tx.Delete(t.Dataset, rd)
			return err
		}); err != nil {
			return err
		}
	}
	if len(complete) > 0 {
		rows := make([][]value, len(complete))
		for i, r := range complete {
			rows[i] = r.vals
		}
		if err := withRecord(mem, t.cols, identity(len(t.cols)), rows, func(rd array.RecordReader) error {
			_, err := tx.Insert(t.Dataset, rd)
			return err
		}); err != nil {
			return err
		}
	}
	for _, s := range staged {
		if err := tx.Exec("INSERT INTO " + target + " BY NAME SELECT * EXCLUDE (" + strings.Join(s.fromCols, ", ") + ") FROM " + s.name); err != nil {
			return err
		}
	}
	return nil
}

// stage holds rows whose unsent columns are being completed from the local table.
type stage struct {
	raw      string // unquoted name
	name     string
	fromCols []string // quoted names of the columns holding the local row's key
}

// newStage copies rows (sharing one set of unsent columns) into a temporary table,
// fails if a local row they need is missing, and fills the unsent columns from the
// local rows. It runs before the batch deletes anything.
func newStage(tx engine.StoreTx, t *table, rows []*row, mem memory.Allocator) (*stage, error) {
	raw := fmt.Sprintf("_cdc_stage_%d", stageSeq.Add(1))
	s := &stage{raw: raw, name: duckIdent(raw)}
	target := duckIdent(t.Dataset)
	var sent, unsent []int
	for i, v := range rows[0].vals {
		if v.kind == 'u' {
			unsent = append(unsent, i)
		} else {
			sent = append(sent, i)
		}
	}
	cols := make([]column, 0, len(sent)+len(t.key))
	var from, match []string
	for _, i := range sent {
		cols = append(cols, t.cols[i])
	}
	for i, k := range t.key {
		c := t.cols[t.column(k)]
		c.name = fmt.Sprintf("_cdc_from_%d", i)
		cols = append(cols, c)
		from = append(from, duckIdent(k)+" AS "+duckIdent(c.name))
		match = append(match, "t."+duckIdent(k)+" IS NOT DISTINCT FROM "+s.name+"."+duckIdent(c.name))
		s.fromCols = append(s.fromCols, duckIdent(c.name))
	}
	if err := tx.Exec("CREATE TEMP TABLE " + s.name + " AS SELECT *, " + strings.Join(from, ", ") + " FROM " + target + " LIMIT 0"); err != nil {
		return s, err
	}
	idx := make([]int, 0, len(cols))
	idx = append(idx, sent...)
	for i := range t.key {
		idx = append(idx, len(t.cols)+i)
	}
	vals := make([][]value, len(rows))
	for i, r := range rows {
		vals[i] = append(append([]value(nil), r.vals...), r.from...)
	}
	if err := withRecord(mem, cols, idx, vals, func(rd array.RecordReader) error {
		_, err := tx.Insert(s.raw, rd)
		return err
	}); err != nil {
		return s, err
	}
	on := strings.Join(match, " AND ")
	missing := "SELECT error('the local row that holds the unchanged TOASTed values of an updated row is missing (key ' || " + s.fromCols[0] +
		"::VARCHAR || '); the local table no longer matches the source: restart to take a new snapshot') FROM " + s.name +
		" WHERE NOT EXISTS (SELECT 1 FROM " + target + " t WHERE " + on + ")"
	if err := tx.Exec(missing); err != nil {
		return s, err
	}
	set := make([]string, len(unsent))
	for i, j := range unsent {
		set[i] = duckIdent(t.cols[j].name) + " = t." + duckIdent(t.cols[j].name)
	}
	return s, tx.Exec("UPDATE " + s.name + " SET " + strings.Join(set, ", ") + " FROM " + target + " t WHERE " + on)
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

// withRecord builds one Arrow record batch with cols, taking column j from
// position idx[j] of each row, and calls fn with a reader over it.
func withRecord(mem memory.Allocator, cols []column, idx []int, rows [][]value, fn func(array.RecordReader) error) error {
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
				return fmt.Errorf("column %q: %w", cols[j].name, err)
			}
		}
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	rd, err := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	if err != nil {
		return err
	}
	defer rd.Release()
	return fn(rd)
}

// duckIdent quotes an identifier for DuckDB.
func duckIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
