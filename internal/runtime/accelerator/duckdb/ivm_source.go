//go:build duckdb_arrow

package duckdb

import (
	"database/sql/driver"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/cqrs-spice/cqrs/internal/runtime/ivm"
)

// Scan runs a query on the transaction's connection and returns its rows as
// DuckDB gives them (no narrowing): the source of a maintained query's state.
func (t *Tx) Scan(query string) ([]arrow.RecordBatch, error) { return t.scan(query) }

var _ ivm.Source = (*Tx)(nil)

func (t *Tx) scan(query string) ([]arrow.RecordBatch, error) {
	var out []arrow.RecordBatch
	err := t.conn.Raw(func(dc any) error {
		var err error
		out, err = queryArrow(t.ctx, dc.(driver.Conn), query)
		return err
	})
	return out, err
}

// scanSchema returns the columns a query gives.
func (t *Tx) scanSchema(query string) (*arrow.Schema, error) {
	var s *arrow.Schema
	err := t.conn.Raw(func(dc any) error {
		a, err := duckdb.NewArrowFromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		rd, err := a.QueryContext(t.ctx, query)
		if err != nil {
			return err
		}
		defer rd.Release()
		s = rd.Schema()
		for rd.Next() {
		}
		return rd.Err()
	})
	return s, err
}

// resultSchema returns the columns of a query's answer as readers get them:
// HUGEINT narrowed, DataFusion's names.
func (t *Tx) resultSchema(query string) (*arrow.Schema, error) {
	var s *arrow.Schema
	err := t.conn.Raw(func(dc any) error {
		ins, err := inspect(dc.(driver.Conn), query)
		if err != nil {
			return err
		}
		names, err := outputNames(t.ctx, dc.(driver.Conn), query)
		if err != nil {
			return err
		}
		a, err := duckdb.NewArrowFromConn(dc.(driver.Conn))
		if err != nil {
			return err
		}
		rd, err := a.QueryContext(t.ctx, `SELECT * FROM (`+query+`) LIMIT 0`)
		if err != nil {
			return err
		}
		defer rd.Release()
		s = renameSchema(narrowSchema(rd.Schema(), ins.huge), names)
		for rd.Next() {
		}
		return rd.Err()
	})
	return s, err
}

// orderDefaults returns the database's default_order and default_null_order.
func (t *Tx) orderDefaults() (order, nulls string, err error) {
	err = t.conn.QueryRowContext(t.ctx, `SELECT current_setting('default_order'), current_setting('default_null_order')`).Scan(&order, &nulls)
	if err != nil {
		return "", "", fmt.Errorf("read the default order: %w", err)
	}
	return strings.ToUpper(order), strings.ToUpper(nulls), nil
}

// columnNames returns the names of a query's result columns.
func (t *Tx) columnNames(query string) ([]string, error) {
	names, _, err := t.describe(query)
	return names, err
}

// describe returns the names and types of a query's result columns.
func (t *Tx) describe(query string) (names, types []string, err error) {
	rows, err := t.conn.QueryContext(t.ctx, `SELECT column_name, column_type FROM (DESCRIBE `+query+`)`)
	if err != nil {
		return nil, nil, fmt.Errorf("describe: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n, ty string
		if err := rows.Scan(&n, &ty); err != nil {
			return nil, nil, err
		}
		names, types = append(names, n), append(types, ty)
	}
	return names, types, rows.Err()
}

// literalType reports whether sqlLiteral writes values of a type as DuckDB
// reads them back equal.
func literalType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16,
		arrow.UINT32, arrow.UINT64, arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.LARGE_STRING, arrow.DECIMAL128:
		return true
	}
	return false
}

// sqlLiteral writes a value of a literalType column as a SQL literal.
func sqlLiteral(v ivm.Value) (string, error) {
	switch x := v.(type) {
	case nil:
		return "NULL", nil
	case bool:
		return strings.ToUpper(strconv.FormatBool(x)), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float64:
		switch {
		case math.IsNaN(x):
			return "'nan'::DOUBLE", nil
		case math.IsInf(x, 1):
			return "'inf'::DOUBLE", nil
		case math.IsInf(x, -1):
			return "'-inf'::DOUBLE", nil
		}
		return strconv.FormatFloat(x, 'g', -1, 64) + "::DOUBLE", nil
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'", nil
	case ivm.Big:
		return x.N.ToString(x.Scale), nil
	}
	return "", fmt.Errorf("no SQL literal for a %T", v)
}
