//go:build duckdb_arrow

package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/lru"
)

// Defaults for DB's tunables.
const (
	// DefaultQueryTimeout bounds one user query.
	DefaultQueryTimeout = 30 * time.Second
	// DefaultMaxResultBytes bounds the Arrow size of one query result.
	DefaultMaxResultBytes = 256 << 20
	// DefaultMaxConnsPerCPU bounds concurrent DuckDB connections for queries per
	// core. DuckDB runs each query on all its threads already; more
	// concurrent queries than this only add contention inside DuckDB (measured on
	// 2 cores: 4 connections answered about 1.4x the queries per second of 64,
	// and 2 fewer than 4). Further queries wait for a connection. Writes have a
	// pool of their own (writeConns), so a change feed never queues behind reads.
	DefaultMaxConnsPerCPU = 2
	// writeConns bounds concurrent write transactions.
	writeConns = 2
	// internalConns are read connections beyond MaxConns for the runtime's own
	// reads (parsing, watermarks, row counts), so that they never wait behind
	// user queries holding every query connection.
	internalConns = 2
	// DefaultMaxTempBytes bounds what DuckDB spills to disk beyond MemoryLimit
	// (in .tmp beside a file database or in the working directory).
	DefaultMaxTempBytes = 1 << 30
	// DefaultInspectCacheBytes bounds the cache of inspected query texts, the
	// texts included.
	DefaultInspectCacheBytes = 16 << 20
)

// DefaultThreads is DuckDB's thread count unless set: half the cores, at least
// one. A runtime serves many small queries at once, each on the goroutine that
// asked, so DuckDB's own default (every core for each query) mostly adds
// scheduling: on 2 cores the recipe's view over 100k orders took 1.9 ms with 1
// thread and 2.8 ms with 2 one at a time, and four at a time answered 1.27x the
// queries per second with 1 thread; at 1M orders 1 thread was still faster.
func DefaultThreads() int { return max(1, runtime.NumCPU()/2) }

// Errors returned by this package; match with errors.Is.
var (
	// ErrReadOnly: a user query was not a single SELECT, or read what users may
	// not (the runtime's internals, settings, the host).
	ErrReadOnly = errors.New("query refused")
	// ErrResultTooLarge: a result exceeded MaxResultBytes, or the query needed
	// more than MemoryLimit. It is engine.ErrResultTooLarge.
	ErrResultTooLarge = engine.ErrResultTooLarge
	// ErrQueryTimeout: a query ran longer than QueryTimeout. It is
	// engine.ErrQueryTimeout.
	ErrQueryTimeout = engine.ErrQueryTimeout
)

// DB is an embedded DuckDB database holding accelerated datasets.
type DB struct {
	// Path of the database file; empty means in memory (the default).
	Path string
	// MemoryLimit is DuckDB's memory_limit in bytes; 0 keeps DuckDB's default
	// (80% of RAM). A query that needs more fails with ErrResultTooLarge.
	MemoryLimit int64
	// MaxTempBytes bounds the spilled data; DefaultMaxTempBytes when zero. A
	// query that needs more fails with ErrResultTooLarge.
	MaxTempBytes int64
	// Threads is DuckDB's thread count; 0 means DefaultThreads().
	Threads int
	// QueryTimeout bounds each user query; DefaultQueryTimeout when zero.
	QueryTimeout time.Duration
	// MaxResultBytes bounds each result; DefaultMaxResultBytes when zero.
	MaxResultBytes int64
	// MaxConns bounds the connections user queries run on at once;
	// DefaultMaxConnsPerCPU per core when zero (at least 4). The engine's
	// admission keeps to it; internalConns more serve the runtime's own reads.
	MaxConns int
	// InspectCacheBytes bounds the cache of inspected query texts;
	// DefaultInspectCacheBytes when zero.
	InspectCacheBytes int64
	// CompactAfterRows is how many rows write transactions delete before the
	// DB checkpoints, which compacts the tables they were deleted from
	// (compaction.go); DefaultCompactAfterRows when zero.
	CompactAfterRows int64
	// Logger receives what goes wrong in the background; nil means
	// slog.Default().
	Logger *slog.Logger
	// Relations, when set, lists the datasets and views that SHOW TABLES,
	// DESCRIBE and information_schema show (introspect.go); nil shows none.
	Relations func() []engine.TableInfo

	db        *sql.DB // reads
	wdb       *sql.DB // writes, on the same database
	inspected *lru.Cache[*inspection]
	outNames  *lru.Cache[map[int]string] // query text -> DataFusion names (names.go)
	resolved  *lru.Cache[string]         // query text -> the text DuckDB runs (resolve.go)
	ordered   orderings                  // datasets read in their subscription's order (order.go)
	cap       captures                   // tables, and whose changes maintained queries read (capture.go)
	stmts     stmtCache                  // the write path's prepared statements (stmts.go)
	apps      appenders                  // the write path's kept appenders (appender.go)
	wm        watermarks                 // every dataset's committed watermark
	mirrors   mirrors                    // small subscribed tables held whole (mirror.go)
	compact   compaction                 // rows deleted since the last checkpoint
	// limitBuffer is the rows a maintained query with a LIMIT keeps past it
	// (ivm.DefaultBuffer when zero); tests make it small.
	limitBuffer int64
}

// watermarks are the committed watermarks, kept in memory: a store
// transaction sets them as it commits, and they are read without a query. A
// file database also stores them in _spice.watermarks (Tx.SetWatermark) and
// reads them back when it opens.
type watermarks struct {
	mu sync.Mutex
	m  map[string]position.LSN
}

func (w *watermarks) set(m map[string]position.LSN) {
	if len(m) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]position.LSN{}
	}
	for d, lsn := range m {
		w.m[d] = lsn
	}
}

func (w *watermarks) all() map[string]position.LSN {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]position.LSN, len(w.m))
	for d, lsn := range w.m {
		out[d] = lsn
	}
	return out
}

// New returns a DB stored at path ("" for memory). Call Open before use.
func New(path string) *DB {
	return &DB{Path: path}
}

// Open opens the database with external access off and creates the bookkeeping
// schema _spice.
func (d *DB) Open(ctx context.Context) error {
	if d.QueryTimeout == 0 {
		d.QueryTimeout = DefaultQueryTimeout
	}
	if d.MaxResultBytes == 0 {
		d.MaxResultBytes = DefaultMaxResultBytes
	}
	if d.MaxConns == 0 {
		d.MaxConns = max(4, DefaultMaxConnsPerCPU*runtime.NumCPU())
	}
	if d.InspectCacheBytes <= 0 {
		d.InspectCacheBytes = DefaultInspectCacheBytes
	}
	if d.CompactAfterRows <= 0 {
		d.CompactAfterRows = DefaultCompactAfterRows
	}
	d.inspected = lru.New[*inspection](d.InspectCacheBytes, 0, nil)
	d.outNames = lru.New[map[int]string](d.InspectCacheBytes, 0, nil)
	d.resolved = lru.New[string](d.InspectCacheBytes, 0, nil)
	q := url.Values{}
	q.Set("enable_external_access", "false")
	q.Set("autoinstall_known_extensions", "false")
	q.Set("autoload_known_extensions", "false")
	querySemantics(q)
	if d.MemoryLimit > 0 {
		q.Set("memory_limit", strconv.FormatInt(d.MemoryLimit>>10, 10)+"KiB")
	}
	if d.MaxTempBytes <= 0 {
		d.MaxTempBytes = DefaultMaxTempBytes
	}
	q.Set("max_temp_directory_size", strconv.FormatInt(d.MaxTempBytes>>10, 10)+"KiB")

	if d.Threads <= 0 {
		d.Threads = DefaultThreads()
	}
	q.Set("threads", strconv.Itoa(d.Threads))
	connector, err := duckdb.NewConnector(d.Path+"?"+q.Encode(), nil)
	if err != nil {
		return fmt.Errorf("open duckdb %q: %w", d.displayPath(), err)
	}
	d.db = sql.OpenDB(connector)
	d.db.SetMaxOpenConns(d.MaxConns + internalConns)
	d.db.SetMaxIdleConns(d.MaxConns + internalConns)
	d.wdb = sql.OpenDB(connector)
	d.wdb.SetMaxOpenConns(writeConns)
	d.wdb.SetMaxIdleConns(writeConns)
	_, err = d.db.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS _spice;
		CREATE TABLE IF NOT EXISTS _spice.watermarks (
			dataset VARCHAR PRIMARY KEY, lsn UBIGINT NOT NULL, updated_at TIMESTAMPTZ NOT NULL)`)
	if err != nil {
		d.db.Close()
		return fmt.Errorf("create bookkeeping schema in %q: %w", d.displayPath(), err)
	}
	if err := d.dropMaintained(ctx); err != nil {
		d.db.Close()
		return fmt.Errorf("open %q: %w", d.displayPath(), err)
	}
	stored, err := d.storedWatermarks(ctx)
	if err != nil {
		d.db.Close()
		return fmt.Errorf("open %q: %w", d.displayPath(), err)
	}
	d.wm.set(stored)
	return nil
}

func (d *DB) displayPath() string {
	if d.Path == "" {
		return ":memory:"
	}
	return d.Path
}

// Close closes the database.
func (d *DB) Close() error {
	if d.db == nil {
		return nil
	}
	d.stmts.close()
	d.apps.close()
	return errors.Join(d.wdb.Close(), d.db.Close())
}

// Watermarks returns the committed watermark of every dataset that has one.
func (d *DB) Watermarks(context.Context) (map[string]position.LSN, error) {
	return d.wm.all(), nil
}

// storedWatermarks reads the watermarks a file database stored.
func (d *DB) storedWatermarks(ctx context.Context) (map[string]position.LSN, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT dataset, lsn FROM _spice.watermarks`)
	if err != nil {
		return nil, fmt.Errorf("read watermarks: %w", err)
	}
	defer rows.Close()
	out := map[string]position.LSN{}
	for rows.Next() {
		var name string
		var lsn uint64
		if err := rows.Scan(&name, &lsn); err != nil {
			return nil, fmt.Errorf("read watermarks: %w", err)
		}
		out[name] = position.LSN(lsn)
	}
	return out, rows.Err()
}

// TableExists reports whether the accelerated table exists.
func (d *DB) TableExists(ctx context.Context, table string) (bool, error) {
	var n int
	schema, name := splitTable(table)
	err := d.db.QueryRowContext(ctx,
		`SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = ?`, schema, name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look up table %s: %w", table, err)
	}
	return n > 0, nil
}

// RowCount returns the number of rows in table.
func (d *DB) RowCount(ctx context.Context, table string) (int64, error) {
	var n int64
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM `+TableIdent(table)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count rows of %s: %w", table, err)
	}
	return n, nil
}

// Max returns max(column) of table, nil when the table is empty.
func (d *DB) Max(ctx context.Context, table, column string) (any, error) {
	var v any
	err := d.db.QueryRowContext(ctx, `SELECT max(`+Ident(column)+`) FROM `+TableIdent(table)).Scan(&v)
	if err != nil {
		return nil, fmt.Errorf("read max(%s) of %s: %w", column, table, err)
	}
	return v, nil
}

// CreateView creates or replaces a query-time view.
func (d *DB) CreateView(ctx context.Context, name, query string) error {
	if err := d.ensureSchema(ctx, name); err != nil {
		return err
	}
	if _, err := d.db.ExecContext(ctx, `CREATE OR REPLACE VIEW `+TableIdent(name)+` AS `+query); err != nil {
		return fmt.Errorf("create view %s: %w", name, err)
	}
	return nil
}

// Tables returns the tables and views a query reads, as DuckDB's parser sees them
// (unqualified, as written). It only parses: the tables need not exist, and the
// read-only check happens in Query.
func (d *DB) Tables(ctx context.Context, query string) ([]string, error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("get connection: %w", err)
	}
	defer conn.Close()
	names, err := duckdb.GetTableNames(conn, query, true)
	if err != nil {
		return nil, fmt.Errorf("parse query: %w", err)
	}
	for i, n := range names {
		names[i] = tableName(n)
	}
	return names, nil
}

func stmtName(t duckdb.StmtType) string {
	switch t {
	case duckdb.STATEMENT_TYPE_INSERT:
		return "INSERT"
	case duckdb.STATEMENT_TYPE_UPDATE:
		return "UPDATE"
	case duckdb.STATEMENT_TYPE_DELETE:
		return "DELETE"
	case duckdb.STATEMENT_TYPE_CREATE, duckdb.STATEMENT_TYPE_CREATE_FUNC:
		return "CREATE"
	case duckdb.STATEMENT_TYPE_DROP:
		return "DROP"
	case duckdb.STATEMENT_TYPE_ALTER:
		return "ALTER"
	case duckdb.STATEMENT_TYPE_COPY:
		return "COPY"
	case duckdb.STATEMENT_TYPE_PRAGMA:
		return "PRAGMA"
	case duckdb.STATEMENT_TYPE_VARIABLE_SET:
		return "SET"
	case duckdb.STATEMENT_TYPE_TRANSACTION:
		return "transaction control"
	case duckdb.STATEMENT_TYPE_EXPLAIN:
		return "EXPLAIN"
	case duckdb.STATEMENT_TYPE_EXPORT:
		return "EXPORT"
	case duckdb.STATEMENT_TYPE_ATTACH:
		return "ATTACH"
	case duckdb.STATEMENT_TYPE_DETACH:
		return "DETACH"
	case duckdb.STATEMENT_TYPE_LOAD:
		return "INSTALL/LOAD"
	case duckdb.STATEMENT_TYPE_CALL:
		return "CALL"
	case duckdb.STATEMENT_TYPE_SET:
		return "SET/RESET"
	case duckdb.STATEMENT_TYPE_VACUUM:
		return "VACUUM/CHECKPOINT"
	default:
		return fmt.Sprintf("non-SELECT (type %d)", t)
	}
}
