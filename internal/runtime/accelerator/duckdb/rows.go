//go:build duckdb_arrow

package duckdb

import (
	"database/sql/driver"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Arrow rows as the Go values DuckDB's appenders take, for ApplyDiff's bulk
// path. Only the types below have one; a schema with any other column takes
// the staged path (SQL over a copy of the Arrow stream).

// column reads one Arrow column as appender values, and names the DuckDB type
// DuckDB gives that Arrow type when it creates a table from it.
type column struct {
	info  duckdb.TypeInfo
	value func(a arrow.Array, i int) driver.Value
}

// columnsOf returns a column for each field of schema, or false when some
// field's type has none.
func columnsOf(schema *arrow.Schema) ([]column, bool) {
	cols := make([]column, schema.NumFields())
	for i, f := range schema.Fields() {
		c, ok := columnOf(f.Type)
		if !ok {
			return nil, false
		}
		cols[i] = c
	}
	return cols, true
}

func columnOf(dt arrow.DataType) (column, bool) {
	var t duckdb.Type
	var value func(a arrow.Array, i int) driver.Value
	switch dt := dt.(type) {
	case *arrow.BooleanType:
		t, value = duckdb.TYPE_BOOLEAN, func(a arrow.Array, i int) driver.Value { return a.(*array.Boolean).Value(i) }
	case *arrow.Int8Type:
		t, value = duckdb.TYPE_TINYINT, func(a arrow.Array, i int) driver.Value { return a.(*array.Int8).Value(i) }
	case *arrow.Int16Type:
		t, value = duckdb.TYPE_SMALLINT, func(a arrow.Array, i int) driver.Value { return a.(*array.Int16).Value(i) }
	case *arrow.Int32Type:
		t, value = duckdb.TYPE_INTEGER, func(a arrow.Array, i int) driver.Value { return a.(*array.Int32).Value(i) }
	case *arrow.Int64Type:
		t, value = duckdb.TYPE_BIGINT, func(a arrow.Array, i int) driver.Value { return a.(*array.Int64).Value(i) }
	case *arrow.Uint8Type:
		t, value = duckdb.TYPE_UTINYINT, func(a arrow.Array, i int) driver.Value { return a.(*array.Uint8).Value(i) }
	case *arrow.Uint16Type:
		t, value = duckdb.TYPE_USMALLINT, func(a arrow.Array, i int) driver.Value { return a.(*array.Uint16).Value(i) }
	case *arrow.Uint32Type:
		t, value = duckdb.TYPE_UINTEGER, func(a arrow.Array, i int) driver.Value { return a.(*array.Uint32).Value(i) }
	case *arrow.Uint64Type:
		t, value = duckdb.TYPE_UBIGINT, func(a arrow.Array, i int) driver.Value { return a.(*array.Uint64).Value(i) }
	case *arrow.Float32Type:
		t, value = duckdb.TYPE_FLOAT, func(a arrow.Array, i int) driver.Value { return a.(*array.Float32).Value(i) }
	case *arrow.Float64Type:
		t, value = duckdb.TYPE_DOUBLE, func(a arrow.Array, i int) driver.Value { return a.(*array.Float64).Value(i) }
	case *arrow.StringType:
		t, value = duckdb.TYPE_VARCHAR, func(a arrow.Array, i int) driver.Value { return a.(*array.String).Value(i) }
	case *arrow.LargeStringType:
		t, value = duckdb.TYPE_VARCHAR, func(a arrow.Array, i int) driver.Value { return a.(*array.LargeString).Value(i) }
	case *arrow.BinaryType:
		t, value = duckdb.TYPE_BLOB, func(a arrow.Array, i int) driver.Value { return a.(*array.Binary).Value(i) }
	case *arrow.LargeBinaryType:
		t, value = duckdb.TYPE_BLOB, func(a arrow.Array, i int) driver.Value { return a.(*array.LargeBinary).Value(i) }
	case *arrow.Date32Type:
		t, value = duckdb.TYPE_DATE, func(a arrow.Array, i int) driver.Value { return a.(*array.Date32).Value(i).ToTime() }
	case *arrow.TimestampType:
		return timestampColumn(dt)
	case *arrow.Decimal128Type:
		return decimalColumn(dt)
	default:
		return column{}, false
	}
	info, err := duckdb.NewTypeInfo(t)
	if err != nil {
		return column{}, false
	}
	return column{info: info, value: value}, true
}

// timestampColumn: DuckDB keeps the unit of a timestamp without a zone and
// reads one with a zone as TIMESTAMPTZ (microseconds).
func timestampColumn(dt *arrow.TimestampType) (column, bool) {
	t := duckdb.TYPE_TIMESTAMP_TZ
	if dt.TimeZone == "" {
		switch dt.Unit {
		case arrow.Second:
			t = duckdb.TYPE_TIMESTAMP_S
		case arrow.Millisecond:
			t = duckdb.TYPE_TIMESTAMP_MS
		case arrow.Microsecond:
			t = duckdb.TYPE_TIMESTAMP
		case arrow.Nanosecond:
			t = duckdb.TYPE_TIMESTAMP_NS
		}
	} else if dt.Unit == arrow.Nanosecond {
		return column{}, false // TIMESTAMPTZ would round it
	}
	info, err := duckdb.NewTypeInfo(t)
	if err != nil {
		return column{}, false
	}
	unit := dt.Unit
	return column{info: info, value: func(a arrow.Array, i int) driver.Value {
		return a.(*array.Timestamp).Value(i).ToTime(unit)
	}}, true
}

func decimalColumn(dt *arrow.Decimal128Type) (column, bool) {
	if dt.Precision < 1 || dt.Precision > 38 || dt.Scale < 0 || dt.Scale > dt.Precision {
		return column{}, false
	}
	width, scale := uint8(dt.Precision), uint8(dt.Scale)
	info, err := duckdb.NewDecimalInfo(width, scale)
	if err != nil {
		return column{}, false
	}
	return column{info: info, value: func(a arrow.Array, i int) driver.Value {
		return duckdb.Decimal{Width: width, Scale: scale, Value: a.(*array.Decimal128).Value(i).BigInt()}
	}}, true
}

// appendRecord appends every row of rec with add, NULLs as nil.
func appendRecord(rec arrow.RecordBatch, cols []column, add func(...driver.Value) error) (int64, error) {
	row := make([]driver.Value, len(cols))
	arrs := rec.Columns()
	for i := 0; i < int(rec.NumRows()); i++ {
		for j, c := range cols {
			if arrs[j].IsNull(i) {
				row[j] = nil
			} else {
				row[j] = c.value(arrs[j], i)
			}
		}
		if err := add(row...); err != nil {
			return int64(i), fmt.Errorf("append row %d: %w", i+1, err)
		}
	}
	return rec.NumRows(), nil
}
