package flightsqlsrc

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// Netting. A feed applies every change that has arrived as one store
// transaction; rather than one ApplyDiff per change, it sums them first into
// one diff with the same effect as applying them one after the other.
//
// Per distinct row (NULLs equal), the changes are a walk over its count: each
// retraction -1, each insertion +1, a change's retractions before its
// insertions. Applied in order they succeed only if the local table holds at
// least as many copies as the walk's lowest point goes below zero (need), and
// leave need+sum copies more than they took. So the net diff retracts need
// copies, which keeps the divergence check exact (a row inserted and then
// retracted within the batch needs none; a row retracted that the batch did
// not insert still needs a local one), and inserts need+sum copies. A row
// retracted and inserted again within the batch is retracted and inserted
// once: its local copy is still checked.

// netRow is one distinct row of a batch.
type netRow struct {
	rec      arrow.RecordBatch // holds the row
	row      int
	sum, low int // the walk's end and lowest point (<= 0)
}

// nettable reports whether every column's values have a key here that is as
// fine as DuckDB's equality; other batches are applied change by change.
func nettable(schema *arrow.Schema) bool {
	for _, f := range schema.Fields() {
		switch f.Type.ID() {
		case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
			arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64, arrow.FLOAT32, arrow.FLOAT64,
			arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY,
			arrow.DECIMAL128, arrow.DATE32, arrow.TIMESTAMP:
		default:
			return false
		}
	}
	return true
}

// netDiffs returns one diff with the effect of diffs applied in order (see
// above), its batches one-row slices of theirs; release it. The schema must
// be nettable.
func netDiffs(schema *arrow.Schema, diffs []engine.Diff) engine.Diff {
	rows := map[string]*netRow{}
	var order []*netRow
	var key []byte
	visit := func(recs []arrow.RecordBatch, step int) {
		for _, rec := range recs {
			for i := 0; i < int(rec.NumRows()); i++ {
				key = rowKey(key[:0], rec, i)
				r := rows[string(key)]
				if r == nil {
					r = &netRow{rec: rec, row: i}
					rows[string(key)] = r
					order = append(order, r)
				}
				r.sum += step
				r.low = min(r.low, r.sum)
			}
		}
	}
	for _, d := range diffs {
		visit(d.Delete, -1)
		visit(d.Insert, +1)
	}
	out := engine.Diff{Schema: schema}
	for _, r := range order {
		need := -r.low
		if need == 0 && r.sum == 0 {
			continue
		}
		one := r.rec.NewSlice(int64(r.row), int64(r.row)+1)
		out.Delete = appendCopies(out.Delete, one, need)
		out.Insert = appendCopies(out.Insert, one, need+r.sum)
		one.Release()
	}
	return out
}

// appendCopies appends n references to rec.
func appendCopies(recs []arrow.RecordBatch, rec arrow.RecordBatch, n int) []arrow.RecordBatch {
	for range n {
		rec.Retain()
		recs = append(recs, rec)
	}
	return recs
}

// rowKey appends a key of row i of rec to b: per column a NULL flag, then the
// value, length-prefixed where its length varies. Equal keys are equal rows
// as DuckDB compares them (-0 and +0 are one value, so is every NaN).
func rowKey(b []byte, rec arrow.RecordBatch, i int) []byte {
	for _, col := range rec.Columns() {
		if col.IsNull(i) {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		switch a := col.(type) {
		case *array.Boolean:
			if a.Value(i) {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		case *array.Int8:
			b = binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
		case *array.Int16:
			b = binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
		case *array.Int32:
			b = binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
		case *array.Int64:
			b = binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
		case *array.Uint8:
			b = binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
		case *array.Uint16:
			b = binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
		case *array.Uint32:
			b = binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
		case *array.Uint64:
			b = binary.LittleEndian.AppendUint64(b, a.Value(i))
		case *array.Float32:
			b = appendFloat(b, float64(a.Value(i)))
		case *array.Float64:
			b = appendFloat(b, a.Value(i))
		case *array.String:
			b = appendBytes(b, []byte(a.Value(i)))
		case *array.LargeString:
			b = appendBytes(b, []byte(a.Value(i)))
		case *array.Binary:
			b = appendBytes(b, a.Value(i))
		case *array.LargeBinary:
			b = appendBytes(b, a.Value(i))
		case *array.Decimal128:
			v := a.Value(i)
			b = binary.LittleEndian.AppendUint64(b, v.LowBits())
			b = binary.LittleEndian.AppendUint64(b, uint64(v.HighBits()))
		case *array.Date32:
			b = binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
		case *array.Timestamp:
			b = binary.LittleEndian.AppendUint64(b, uint64(a.Value(i)))
		default: // not nettable (see nettable): never reached
			b = appendBytes(b, []byte(col.ValueStr(i)))
		}
	}
	return b
}

func appendFloat(b []byte, f float64) []byte {
	switch {
	case f == 0:
		f = 0
	case math.IsNaN(f):
		f = math.NaN()
	}
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}
