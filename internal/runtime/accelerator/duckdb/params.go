//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	duckdb "github.com/duckdb/duckdb-go/v2"
)

// ParamTypes returns the Arrow types of a user query's placeholders, as DuckDB
// infers them from where each is used: a Flight SQL prepared statement's
// parameter schema. A placeholder whose type DuckDB cannot infer (? IS NULL)
// is VARCHAR, which DuckDB casts to what the query needs. The query passes
// name resolution and the read-only guard first, as every user query does.
func (d *DB) ParamTypes(ctx context.Context, query string) ([]arrow.DataType, error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("get connection: %w", err)
	}
	defer conn.Close()
	var out []arrow.DataType
	err = conn.Raw(func(raw any) error {
		dc := raw.(driver.Conn)
		resolved, err := d.resolve(ctx, dc, query)
		if err != nil {
			return err
		}
		if _, err := guard(ctx, dc, resolved, true); err != nil {
			return err
		}
		st, err := dc.Prepare(resolved)
		if err != nil {
			return err
		}
		defer st.Close()
		s := st.(*duckdb.Stmt)
		for i := 1; i <= s.NumInput(); i++ {
			t, err := s.ParamType(i)
			if err != nil {
				return fmt.Errorf("type of parameter %d: %w", i, err)
			}
			out = append(out, arrowParamType(t))
		}
		return nil
	})
	return out, err
}

// arrowParamType is the Arrow type a client sends for a DuckDB parameter type.
func arrowParamType(t duckdb.Type) arrow.DataType {
	switch t {
	case duckdb.TYPE_BOOLEAN:
		return arrow.FixedWidthTypes.Boolean
	case duckdb.TYPE_TINYINT:
		return arrow.PrimitiveTypes.Int8
	case duckdb.TYPE_SMALLINT:
		return arrow.PrimitiveTypes.Int16
	case duckdb.TYPE_INTEGER:
		return arrow.PrimitiveTypes.Int32
	case duckdb.TYPE_BIGINT, duckdb.TYPE_HUGEINT:
		return arrow.PrimitiveTypes.Int64
	case duckdb.TYPE_UTINYINT:
		return arrow.PrimitiveTypes.Uint8
	case duckdb.TYPE_USMALLINT:
		return arrow.PrimitiveTypes.Uint16
	case duckdb.TYPE_UINTEGER:
		return arrow.PrimitiveTypes.Uint32
	case duckdb.TYPE_UBIGINT:
		return arrow.PrimitiveTypes.Uint64
	case duckdb.TYPE_FLOAT:
		return arrow.PrimitiveTypes.Float32
	case duckdb.TYPE_DOUBLE:
		return arrow.PrimitiveTypes.Float64
	case duckdb.TYPE_DATE:
		return arrow.FixedWidthTypes.Date32
	case duckdb.TYPE_TIMESTAMP:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case duckdb.TYPE_TIMESTAMP_TZ:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	case duckdb.TYPE_BLOB:
		return arrow.BinaryTypes.Binary
	default: // VARCHAR, and what DuckDB casts from text (DECIMAL, UUID, ...) or cannot infer
		return arrow.BinaryTypes.String
	}
}
