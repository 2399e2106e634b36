package flightsrv

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
)

// withColumnMetadata returns s with the Flight SQL column metadata on every
// field (ARROW:FLIGHT:SQL:TYPE_NAME, PRECISION and SCALE for decimals,
// IS_READ_ONLY, IS_CASE_SENSITIVE, ...), which Flight SQL clients (JDBC, ADBC)
// read as the column's database type. Fields that carry metadata already keep
// it.
func withColumnMetadata(s *arrow.Schema) *arrow.Schema {
	if s == nil {
		return nil
	}
	fields := make([]arrow.Field, s.NumFields())
	changed := false
	for i, f := range s.Fields() {
		fields[i] = f
		if f.HasMetadata() {
			continue
		}
		b := flightsql.NewColumnMetadataBuilder().
			TypeName(sqlTypeName(f.Type)).
			IsReadOnly(true).
			IsAutoIncrement(false).
			IsSearchable(true).
			IsCaseSensitive(isText(f.Type))
		if d, ok := f.Type.(arrow.DecimalType); ok {
			b.Precision(d.GetPrecision()).Scale(d.GetScale())
		}
		fields[i].Metadata = b.Metadata()
		changed = true
	}
	if !changed {
		return s
	}
	md := s.Metadata()
	return arrow.NewSchema(fields, &md)
}

// withSchema returns recs (each retained) under schema, which differs from
// theirs only in metadata, as an IPC stream requires.
func withSchema(schema *arrow.Schema, recs []arrow.RecordBatch) []arrow.RecordBatch {
	out := make([]arrow.RecordBatch, len(recs))
	for i, r := range recs {
		out[i] = array.NewRecordBatch(schema, r.Columns(), r.NumRows())
	}
	return out
}

func isText(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return true
	}
	return false
}

// sqlTypeName is the SQL name of the type a column of Arrow type t has in the
// accelerator (DuckDB's names, which are also Postgres's for the common ones).
func sqlTypeName(t arrow.DataType) string {
	switch t.ID() {
	case arrow.BOOL:
		return "BOOLEAN"
	case arrow.INT8:
		return "TINYINT"
	case arrow.INT16:
		return "SMALLINT"
	case arrow.INT32:
		return "INTEGER"
	case arrow.INT64:
		return "BIGINT"
	case arrow.UINT8:
		return "UTINYINT"
	case arrow.UINT16:
		return "USMALLINT"
	case arrow.UINT32:
		return "UINTEGER"
	case arrow.UINT64:
		return "UBIGINT"
	case arrow.FLOAT16, arrow.FLOAT32:
		return "FLOAT"
	case arrow.FLOAT64:
		return "DOUBLE"
	case arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		return "DECIMAL"
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return "VARCHAR"
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return "BLOB"
	case arrow.DATE32, arrow.DATE64:
		return "DATE"
	case arrow.TIME32, arrow.TIME64:
		return "TIME"
	case arrow.TIMESTAMP:
		if t.(*arrow.TimestampType).TimeZone != "" {
			return "TIMESTAMP WITH TIME ZONE"
		}
		return "TIMESTAMP"
	case arrow.INTERVAL_MONTHS, arrow.INTERVAL_DAY_TIME, arrow.INTERVAL_MONTH_DAY_NANO, arrow.DURATION:
		return "INTERVAL"
	case arrow.LIST, arrow.LARGE_LIST, arrow.LIST_VIEW, arrow.LARGE_LIST_VIEW, arrow.FIXED_SIZE_LIST:
		return "LIST"
	case arrow.STRUCT:
		return "STRUCT"
	case arrow.MAP:
		return "MAP"
	case arrow.NULL:
		return "NULL"
	}
	return t.String()
}
