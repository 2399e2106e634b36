//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// CheckView refuses a view's query unless it is one read-only SELECT that
// passes the guard user queries pass: a view is read with users' keys, so it
// may read no more than they may (no internal schemas such as _spice, no
// settings, catalog or file functions). It runs when the engine registers
// views, before their datasets have loaded, so a query that fails only because
// a table or column does not exist yet is accepted here: DuckDB reports those
// while binding, after it has split the text into statements, so a second
// statement is still refused; the guard reads the parse tree alone. The error
// matches ErrReadOnly when the query is refused.
func (d *DB) CheckView(ctx context.Context, query string) error {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("get connection: %w", err)
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		if _, err := guard(ctx, dc.(driver.Conn), query, true); err != nil {
			return err
		}
		_, err := inspect(dc.(driver.Conn), query)
		var de *duckdb.Error
		switch {
		case err == nil, errors.Is(err, ErrReadOnly):
			return err
		case isMultiStatement(err):
			return fmt.Errorf("%w: the text holds more than one statement; a view is one SELECT, without a semicolon in between", ErrReadOnly)
		case errors.As(err, &de) && (de.Type == duckdb.ErrorTypeCatalog || de.Type == duckdb.ErrorTypeBinder):
			return nil
		}
		return err
	})
}

// isMultiStatement recognises duckdb-go's refusal to prepare several
// statements at once (it has no exported sentinel); TestCheckView pins it.
func isMultiStatement(err error) bool {
	return strings.Contains(err.Error(), "multi-statement")
}
