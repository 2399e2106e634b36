//go:build duckdb_arrow

package duckdbsrc

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// Options say which DuckDB instance Open creates.
type Options struct {
	// Path is a database file to open read-only; empty opens an empty in-memory
	// database.
	Path string
	// Files and Dirs are the only files and directories the instance may read
	// besides Path; everything else is refused.
	Files []string
	Dirs  []string
}

// DB is a private DuckDB instance for one connector: never the query engine's.
type DB struct {
	db *sql.DB
}

// Open creates the instance: read-only when o.Path is set, in UTC, with external
// access off except for o.Files and o.Dirs, and its configuration locked.
func Open(ctx context.Context, o Options) (*DB, error) {
	q := url.Values{}
	q.Set("autoinstall_known_extensions", "false")
	q.Set("autoload_known_extensions", "false")
	q.Set("threads", "1")
	if o.Path != "" {
		q.Set("access_mode", "read_only")
	}
	c, err := duckdb.NewConnector(o.Path+"?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("open duckdb %s: %w", display(o.Path), err)
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(2)
	setup := []string{"SET GLOBAL TimeZone = 'UTC'"}
	if len(o.Files) > 0 {
		setup = append(setup, "SET GLOBAL allowed_paths = "+list(o.Files))
	}
	if len(o.Dirs) > 0 {
		setup = append(setup, "SET GLOBAL allowed_directories = "+list(o.Dirs))
	}
	setup = append(setup, "SET GLOBAL enable_external_access = false", "SET GLOBAL lock_configuration = true")
	for _, s := range setup {
		if _, err := db.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, fmt.Errorf("configure duckdb %s (%s): %w", display(o.Path), s, err)
		}
	}
	return &DB{db: db}, nil
}

func display(path string) string {
	if path == "" {
		return ":memory:"
	}
	return path
}

// list renders paths as a DuckDB list of string literals.
func list(paths []string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = Quote(p)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Close closes the instance. It is safe to call on nil.
func (d *DB) Close() {
	if d != nil && d.db != nil {
		d.db.Close()
	}
}

// QueryRow runs a query that answers one row (lookups of tables and columns).
func (d *DB) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return d.db.QueryRowContext(ctx, query, args...)
}

// Query runs a query that answers rows.
func (d *DB) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return d.db.QueryContext(ctx, query, args...)
}

// Scan streams SELECT ... FROM relation, narrowed by req, to fn as Arrow record
// batches stamped with pos. relation is used as written: a table name or a
// table function call such as read_csv(...).
func (d *DB) Scan(ctx context.Context, relation string, req engine.ScanRequest, pos position.LSN, fn func(engine.Snapshot) error) error {
	query, err := engine.ScanSQL(relation, req.Columns, req)
	if err != nil {
		return err
	}
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var fnErr error
	err = conn.Raw(func(dc any) error {
		dconn, ok := dc.(driver.Conn)
		if !ok {
			return errors.New("duckdb connection is not a driver.Conn")
		}
		a, err := duckdb.NewArrowFromConn(dconn)
		if err != nil {
			return err
		}
		rd, err := a.QueryContext(ctx, query)
		if err != nil {
			return err
		}
		defer rd.Release()
		fnErr = fn(engine.Snapshot{Reader: rd, Position: pos})
		return fnErr
	})
	if err != nil && fnErr == nil {
		return fmt.Errorf("query %s: %w", query, err)
	}
	return err
}
