//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// A store transaction starts its DuckDB transaction with its first statement,
// not when it is begun, and keeps back a first INSERT until it knows whether
// another statement follows. A transaction that ends up being that one
// INSERT (a change feed's batch of new rows, whose watermark and maintained
// views live in memory) runs it on its own, which DuckDB commits as one
// statement: no BEGIN, no COMMIT, and an appender flushed outside a
// transaction costs DuckDB half what it costs inside one. A transaction of no
// statement at all (a heartbeat moving watermarks) costs DuckDB nothing. Every
// other statement, a read included, starts the DuckDB transaction and runs
// the kept INSERT in it first, so what the transaction reads and writes is
// what it would have been.

// txConn is a transaction's connection: every use starts the DuckDB
// transaction first.
type txConn struct {
	t *Tx
	c *sql.Conn
}

func (c *txConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := c.t.begin(); err != nil {
		return nil, err
	}
	return c.c.ExecContext(ctx, query, args...)
}

func (c *txConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := c.t.begin(); err != nil {
		return nil, err
	}
	return c.c.QueryContext(ctx, query, args...)
}

// QueryRowContext answers a row whose Scan reports a failure to begin.
func (c *txConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if err := c.t.begin(); err != nil {
		return c.c.QueryRowContext(ctx, "SELECT error(?)", "begin: "+err.Error())
	}
	return c.c.QueryRowContext(ctx, query, args...)
}

func (c *txConn) Raw(fn func(driverConn any) error) error {
	if err := c.t.begin(); err != nil {
		return err
	}
	return c.c.Raw(fn)
}

// keptInsert is the first INSERT of a transaction, not run yet.
type keptInsert struct {
	table  string
	schema *arrow.Schema
	recs   []arrow.RecordBatch
}

// begin starts the DuckDB transaction, once, and runs the kept INSERT in it.
func (t *Tx) begin() error {
	if t.begun {
		return nil
	}
	t.begun = true
	// Prepared once per connection, like every statement of the write path:
	// parsing and planning even BEGIN costs DuckDB more than running it.
	if _, err := t.execPrepared("BEGIN TRANSACTION"); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	return t.runKept()
}

// runKept runs the kept INSERT, if any.
func (t *Tx) runKept() error {
	k := t.kept
	if k == nil {
		return nil
	}
	t.kept = nil
	defer releaseAll(k.recs)
	if err := t.insertRecords(k.table, k.schema, k.recs); err != nil {
		return fmt.Errorf("insert into %s: %w", k.table, err)
	}
	return nil
}

// keep keeps back the transaction's first INSERT; false when the transaction
// has begun or holds one already.
func (t *Tx) keep(table string, schema *arrow.Schema, recs []arrow.RecordBatch) bool {
	if t.begun || t.kept != nil {
		return false
	}
	for _, r := range recs {
		r.Retain()
	}
	t.kept = &keptInsert{table: table, schema: schema, recs: recs}
	return true
}
