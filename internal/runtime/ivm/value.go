package ivm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// A Value is one SQL value in memory: nil (NULL), bool, int64 (every signed
// integer, unsigned integers up to 32 bits, dates, times and timestamps in
// their Arrow unit), uint64, float64 (REAL widened), string (text and binary),
// or Big (HUGEINT and DECIMAL). The values of one column are all of one kind.
type Value = any

// Big is an exact number of up to 38 digits: the unscaled value and its scale.
type Big struct {
	N     decimal128.Num
	Scale int32
}

// Row is one row of values.
type Row []Value

// Supported reports whether values of an Arrow type can be kept in memory.
func Supported(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.LARGE_STRING,
		arrow.BINARY, arrow.LARGE_BINARY, arrow.DECIMAL128,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64:
		return true
	}
	return false
}

// getter returns a function that reads row i of arr as a Value.
func getter(arr arrow.Array) (func(i int) Value, error) {
	switch a := arr.(type) {
	case *array.Boolean:
		return nullable(a, func(i int) Value { return a.Value(i) }), nil
	case *array.Int8:
		return nullable(a, func(i int) Value { return int64(a.Value(i)) }), nil
	case *array.Int16:
		return nullable(a, func(i int) Value { return int64(a.Value(i)) }), nil
	case *array.Int32:
		return nullable(a, func(i int) Value { return int64(a.Value(i)) }), nil
	case *array.Int64:
		return nullable(a, func(i int) Value { return a.Value(i) }), nil
	case *array.Uint8:
		return nullable(a, func(i int) Value { return int64(a.Value(i)) }), nil
	case *array.Uint16:
		return nullable(a, func(i int) Value { return int64(a.Value(i)) }), nil
	case *array.Uint32:
		return nullable(a, func(i int) Value { return int64(a.Value(i)) }), nil
	case *array.Uint64:
		return nullable(a, func(i int) Value { return a.Value(i) }), nil
	case *array.Float32:
		return nullable(a, func(i int) Value { return float64(a.Value(i)) }), nil
	case *array.Float64:
		return nullable(a, func(i int) Value { return a.Value(i) }), nil
	case *array.String:
		return nullable(a, func(i int) Value { return strings.Clone(a.Value(i)) }), nil
	case *array.LargeString:
		return nullable(a, func(i int) Value { return strings.Clone(a.Value(i)) }), nil
	case *array.Binary:
		return nullable(a, func(i int) Value { return string(a.Value(i)) }), nil
	case *array.LargeBinary:
		return nullable(a, func(i int) Value { return string(a.Value(i)) }), nil
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		return nullable(a, func(i int) Value { return Big{N: a.Value(i), Scale: scale} }), nil
	case *array.Date32:
		return nullable(a, func(i int) Value { return int64(a.Value(i)) }), nil
	case *array.Date64:
		return nullable(a, func(i int) Value { return int64(a.Value(i)) }), nil
	case *array.Timestamp:
		return nullable(a, func(i int) Value { return int64(a.Value(i)) }), nil
	case *array.Time32:
		return nullable(a, func(i int) Value { return int64(a.Value(i)) }), nil
	case *array.Time64:
		return nullable(a, func(i int) Value { return int64(a.Value(i)) }), nil
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupportedType, arr.DataType())
}

func nullable(a arrow.Array, get func(int) Value) func(int) Value {
	if a.NullN() == 0 {
		return get
	}
	return func(i int) Value {
		if a.IsNull(i) {
			return nil
		}
		return get(i)
	}
}

// Rows reads the columns cols (indexes into rec) of every row of rec.
func Rows(rec arrow.RecordBatch, cols []int) ([]Row, error) {
	gets := make([]func(int) Value, len(cols))
	for j, c := range cols {
		g, err := getter(rec.Column(c))
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", rec.ColumnName(c), err)
		}
		gets[j] = g
	}
	n := int(rec.NumRows())
	out := make([]Row, n)
	vals := make([]Value, n*len(cols))
	for i := range out {
		r := vals[i*len(cols) : (i+1)*len(cols) : (i+1)*len(cols)]
		for j, g := range gets {
			r[j] = g(i)
		}
		out[i] = r
	}
	return out, nil
}

// Key tags: one byte before each value of an encoded key.
const (
	tagNull byte = iota
	tagBool
	tagInt
	tagUint
	tagFloat
	tagString
	tagBig
)

// appendKey appends v to a key so that two keys are equal exactly when their
// values are equal as DuckDB groups them: NULL equals NULL, 0.0 equals -0.0,
// every NaN is one value.
func appendKey(b []byte, v Value) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, tagNull)
	case bool:
		if x {
			return append(b, tagBool, 1)
		}
		return append(b, tagBool, 0)
	case int64:
		return binary.BigEndian.AppendUint64(append(b, tagInt), uint64(x))
	case uint64:
		return binary.BigEndian.AppendUint64(append(b, tagUint), x)
	case float64:
		switch {
		case x == 0:
			x = 0
		case math.IsNaN(x):
			x = math.NaN()
		}
		return binary.BigEndian.AppendUint64(append(b, tagFloat), math.Float64bits(x))
	case string:
		b = binary.AppendUvarint(append(b, tagString), uint64(len(x)))
		return append(b, x...)
	case Big:
		b = binary.BigEndian.AppendUint32(append(b, tagBig), uint32(x.Scale))
		b = binary.BigEndian.AppendUint64(b, uint64(x.N.HighBits()))
		return binary.BigEndian.AppendUint64(b, x.N.LowBits())
	}
	panic(fmt.Sprintf("ivm: value of type %T", v))
}

// appendRowKey appends the key of the values of row at cols (all of row when
// cols is nil).
func appendRowKey(buf []byte, row Row, cols []int) []byte {
	if cols == nil {
		for _, v := range row {
			buf = appendKey(buf, v)
		}
		return buf
	}
	for _, c := range cols {
		buf = appendKey(buf, row[c])
	}
	return buf
}

// hasNull reports whether a value of row at cols is NULL: such a key joins
// nothing.
func hasNull(row Row, cols []int) bool {
	for _, c := range cols {
		if row[c] == nil {
			return true
		}
	}
	return false
}

// compare orders two non-NULL values of one column as DuckDB does: numbers by
// value with NaN above every other float, text and binary byte by byte, false
// before true.
func compare(a, b Value) int {
	switch x := a.(type) {
	case int64:
		return cmpOrdered(x, b.(int64))
	case uint64:
		return cmpOrdered(x, b.(uint64))
	case float64:
		y := b.(float64)
		switch xn, yn := math.IsNaN(x), math.IsNaN(y); {
		case xn && yn:
			return 0
		case xn:
			return 1
		case yn:
			return -1
		}
		return cmpOrdered(x, y)
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case Big:
		return compareBig(x, b.(Big))
	}
	panic(fmt.Sprintf("ivm: compare values of type %T", a))
}

func cmpOrdered[T int64 | uint64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareBig(a, b Big) int {
	if a.Scale != b.Scale {
		a, b = sameScale(a, b)
	}
	return a.N.Cmp(b.N)
}

// sameScale brings two Bigs to the larger of their scales.
func sameScale(a, b Big) (Big, Big) {
	switch {
	case a.Scale < b.Scale:
		a = Big{N: a.N.IncreaseScaleBy(b.Scale - a.Scale), Scale: b.Scale}
	case b.Scale < a.Scale:
		b = Big{N: b.N.IncreaseScaleBy(a.Scale - b.Scale), Scale: a.Scale}
	}
	return a, b
}

// equalRows reports whether two rows hold equal values (NULLs equal).
func equalRows(a, b Row) bool {
	if len(a) != len(b) {
		return false
	}
	var ka, kb [64]byte
	for i := range a {
		if !bytes.Equal(appendKey(ka[:0], a[i]), appendKey(kb[:0], b[i])) {
			return false
		}
	}
	return true
}
