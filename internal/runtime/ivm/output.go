package ivm

import (
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Errors of this package; match with errors.Is.
var (
	// ErrUnsupportedType: a column's Arrow type cannot be kept in memory
	// (Supported says which can); the planner does not admit such plans.
	ErrUnsupportedType = errors.New("column type not kept in memory")
	// ErrOutOfRange: a maintained value does not fit its column's type (a SUM
	// of integers past 64 bits, say), as DuckDB's narrowing would also refuse.
	ErrOutOfRange = errors.New("value out of range of its column")
)

// build makes one record of schema from rows.
func build(mem memory.Allocator, schema *arrow.Schema, rows []Row) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for _, r := range rows {
		for j, v := range r {
			if err := appendValue(b.Field(j), v); err != nil {
				return nil, fmt.Errorf("column %q: %w", schema.Field(j).Name, err)
			}
		}
	}
	return b.NewRecordBatch(), nil
}

// appendValue appends v to b, converting between kinds where the builder's
// type asks for it (a SUM of integers, a HUGEINT, into an int64 column).
func appendValue(b array.Builder, v Value) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.Int8Builder:
		n, err := asInt(v, math.MinInt8, math.MaxInt8)
		b.Append(int8(n))
		return err
	case *array.Int16Builder:
		n, err := asInt(v, math.MinInt16, math.MaxInt16)
		b.Append(int16(n))
		return err
	case *array.Int32Builder:
		n, err := asInt(v, math.MinInt32, math.MaxInt32)
		b.Append(int32(n))
		return err
	case *array.Int64Builder:
		n, err := asInt(v, math.MinInt64, math.MaxInt64)
		b.Append(n)
		return err
	case *array.Uint8Builder:
		n, err := asInt(v, 0, math.MaxUint8)
		b.Append(uint8(n))
		return err
	case *array.Uint16Builder:
		n, err := asInt(v, 0, math.MaxUint16)
		b.Append(uint16(n))
		return err
	case *array.Uint32Builder:
		n, err := asInt(v, 0, math.MaxUint32)
		b.Append(uint32(n))
		return err
	case *array.Uint64Builder:
		u, ok := v.(uint64)
		if !ok {
			n, err := asInt(v, 0, math.MaxInt64)
			b.Append(uint64(n))
			return err
		}
		b.Append(u)
	case *array.Float32Builder:
		b.Append(float32(asFloat(v)))
	case *array.Float64Builder:
		b.Append(asFloat(v))
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.LargeStringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		b.Append([]byte(v.(string)))
	case *array.Decimal128Builder:
		t := b.Type().(*arrow.Decimal128Type)
		n, err := asDecimal(v, t.Precision, t.Scale)
		b.Append(n)
		return err
	case *array.Date32Builder:
		b.Append(arrow.Date32(v.(int64)))
	case *array.Date64Builder:
		b.Append(arrow.Date64(v.(int64)))
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(v.(int64)))
	case *array.Time32Builder:
		b.Append(arrow.Time32(v.(int64)))
	case *array.Time64Builder:
		b.Append(arrow.Time64(v.(int64)))
	default:
		return fmt.Errorf("%w: %s", ErrUnsupportedType, b.Type())
	}
	return nil
}

// asInt converts an integer value (int64, uint64 or a Big of scale 0) to an
// int64 within [lo, hi].
func asInt(v Value, lo, hi int64) (int64, error) {
	switch x := v.(type) {
	case int64:
		if x < lo || x > hi {
			return 0, fmt.Errorf("%w: %d", ErrOutOfRange, x)
		}
		return x, nil
	case uint64:
		if x > uint64(hi) {
			return 0, fmt.Errorf("%w: %d", ErrOutOfRange, x)
		}
		return int64(x), nil
	case Big:
		if x.Scale == 0 && fitsInt64(x.N) {
			n := int64(x.N.LowBits())
			if n >= lo && n <= hi {
				return n, nil
			}
		}
		return 0, fmt.Errorf("%w: %s", ErrOutOfRange, x.N.ToString(x.Scale))
	}
	return 0, fmt.Errorf("%w: %T is not an integer", ErrUnsupportedType, v)
}

func fitsInt64(n decimal128.Num) bool {
	lo, hi := n.LowBits(), n.HighBits()
	return hi == 0 && lo <= math.MaxInt64 || hi == -1 && lo > math.MaxInt64
}

// asFloat converts a number to float64.
func asFloat(v Value) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case Big:
		return x.N.ToFloat64(x.Scale)
	}
	panic(fmt.Sprintf("ivm: %T is not a number", v))
}

// asDecimal converts an exact number to an unscaled value at scale that fits
// precision digits.
func asDecimal(v Value, precision, scale int32) (decimal128.Num, error) {
	var b Big
	switch x := v.(type) {
	case Big:
		b = x
	case int64:
		b = Big{N: decimal128.FromI64(x)}
	default:
		return decimal128.Num{}, fmt.Errorf("%w: %T is not an exact number", ErrUnsupportedType, v)
	}
	n, err := b.N.Rescale(b.Scale, scale)
	if err != nil || !n.FitsInPrecision(precision) {
		return decimal128.Num{}, fmt.Errorf("%w: %s as DECIMAL(%d,%d)", ErrOutOfRange, b.N.ToString(b.Scale), precision, scale)
	}
	return n, nil
}

// Build makes one record of schema from rows (a row's values in the
// schema's column order, of the kinds Rows gives).
func Build(mem memory.Allocator, schema *arrow.Schema, rows []Row) (arrow.RecordBatch, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	return build(mem, schema, rows)
}

// Key is a row's key: equal for rows whose values are equal as DuckDB groups
// them (NULLs equal).
func Key(row Row) string { return string(appendRowKey(nil, row, nil)) }
