//go:build duckdb_arrow

package duckdb

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// rowRef is one row of a result: the batch and the row within it.
type rowRef struct {
	rec arrow.RecordBatch
	row int
}

// rowKeys renders each row of a result as a string that equals another's only
// when the rows are equal (NULLs equal to each other, as in EXCEPT ALL).
func rowKeys(res *engine.Result) ([]string, []rowRef) {
	var keys []string
	var refs []rowRef
	var b strings.Builder
	for _, rec := range res.Records {
		for i := 0; i < int(rec.NumRows()); i++ {
			b.Reset()
			for _, col := range rec.Columns() {
				if col.IsNull(i) {
					b.WriteString("\x01")
				} else {
					b.WriteString(col.ValueStr(i))
				}
				b.WriteByte(0)
			}
			keys = append(keys, b.String())
			refs = append(refs, rowRef{rec, i})
		}
	}
	return keys, refs
}

// diffResults returns the rows of prev that next lacks (Delete) and those of
// next that prev lacks (Insert), counting duplicates, as EXCEPT ALL does both
// ways.
func diffResults(prev, next *engine.Result) (engine.Diff, error) {
	if !prev.Schema.Equal(next.Schema) {
		return engine.Diff{}, fmt.Errorf("the result's columns changed from %v to %v", prev.Schema, next.Schema)
	}
	pk, pr := rowKeys(prev)
	nk, nr := rowKeys(next)
	count := make(map[string]int, len(pk))
	for _, k := range nk {
		count[k]++
	}
	var del []rowRef
	for i, k := range pk {
		if count[k] > 0 {
			count[k]--
			continue
		}
		del = append(del, pr[i])
	}
	clear(count)
	for _, k := range pk {
		count[k]++
	}
	var ins []rowRef
	for i, k := range nk {
		if count[k] > 0 {
			count[k]--
			continue
		}
		ins = append(ins, nr[i])
	}
	d := engine.Diff{Schema: next.Schema}
	var err error
	if d.Delete, err = gather(prev.Schema, del); err != nil {
		return engine.Diff{}, err
	}
	if d.Insert, err = gather(next.Schema, ins); err != nil {
		d.Release()
		return engine.Diff{}, err
	}
	return d, nil
}

// gather copies the given rows into one record batch (none when there are no
// rows).
func gather(schema *arrow.Schema, rows []rowRef) ([]arrow.RecordBatch, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	parts := make([]arrow.Array, len(rows))
	for c := range cols {
		for i, r := range rows {
			parts[i] = array.NewSlice(r.rec.Column(c), int64(r.row), int64(r.row+1))
		}
		col, err := array.Concatenate(parts, memory.DefaultAllocator)
		for _, p := range parts {
			p.Release()
		}
		if err != nil {
			return nil, fmt.Errorf("gather changed rows: %w", err)
		}
		cols[c] = col
	}
	return []arrow.RecordBatch{array.NewRecordBatch(schema, cols, int64(len(rows)))}, nil
}
