//go:build duckdb_arrow

package duckdb

import (
	"database/sql/driver"
	"fmt"
	"sync"
)

// maxStmtsPerConn bounds the prepared statements kept per write connection;
// past it they are all closed and prepared again as used. The statements of
// the write path are few (an INSERT per table and row count up to
// maxPreparedRows, a watermark update per feed, clearing a changes table), so
// the bound is only a guard.
const maxStmtsPerConn = 512

// stmtCache keeps the write path's statements prepared per write connection:
// DuckDB parses, binds and plans a statement text every time it runs one,
// which costs more than running the statements of a small change. DuckDB binds
// a prepared statement again by itself when a table it reads has changed.
type stmtCache struct {
	mu    sync.Mutex
	conns map[any]map[string]driver.Stmt // driver connection -> text -> statement
}

func (c *stmtCache) get(dc any, query string) driver.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conns[dc][query]
}

func (c *stmtCache) put(dc any, query string, st driver.Stmt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conns == nil {
		c.conns = map[any]map[string]driver.Stmt{}
	}
	m := c.conns[dc]
	if len(m) >= maxStmtsPerConn {
		for _, old := range m {
			_ = old.Close()
		}
		m = nil
	}
	if m == nil {
		m = map[string]driver.Stmt{}
		c.conns[dc] = m
	}
	m[query] = st
}

// drop closes and forgets one statement, after it failed.
func (c *stmtCache) drop(dc any, query string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.conns[dc][query]; st != nil {
		_ = st.Close()
		delete(c.conns[dc], query)
	}
}

// execPrepared runs one statement of the write path with its statement
// prepared once per connection, and returns the rows it affected.
func (t *Tx) execPrepared(query string, args ...any) (int64, error) {
	var n int64
	err := t.conn.Raw(func(dc any) error {
		st := t.db.stmts.get(dc, query)
		if st == nil {
			p, ok := dc.(driver.ConnPrepareContext)
			if !ok {
				return fmt.Errorf("prepare: driver connection %T cannot prepare", dc)
			}
			var err error
			if st, err = p.PrepareContext(t.ctx, query); err != nil {
				return err
			}
			t.db.stmts.put(dc, query, st)
		}
		named := make([]driver.NamedValue, len(args))
		for i, a := range args {
			named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
		}
		res, err := st.(driver.StmtExecContext).ExecContext(t.ctx, named)
		if err != nil {
			t.db.stmts.drop(dc, query)
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n, err
}

// close closes every statement; the DB calls it before it closes its
// connections, which the statements would otherwise keep open (and with them
// the database file).
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.conns {
		for _, st := range m {
			_ = st.Close()
		}
	}
	c.conns = nil
}
