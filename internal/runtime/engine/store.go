package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// Store is the accelerator: it holds the accelerated tables and runs every query.
// The duckdb package implements it.
type Store interface {
	// Update runs fn in one write transaction and commits it when fn returns nil:
	// data and watermarks change together or not at all.
	Update(ctx context.Context, fn func(StoreTx) error) error
	// Query runs one read-only SELECT and returns the whole result.
	Query(ctx context.Context, q StoreQuery) (*Result, error)
	// Tables parses a query, refuses anything but one SELECT, and returns the names
	// of the tables and views it reads, as written.
	Tables(ctx context.Context, query string) ([]string, error)
	// Watermarks returns the stored watermark of every dataset that has one.
	Watermarks(ctx context.Context) (map[string]position.LSN, error)
	// CreateView creates or replaces a query-time view.
	CreateView(ctx context.Context, name, query string) error
	// TableExists and RowCount describe an accelerated table.
	TableExists(ctx context.Context, table string) (bool, error)
	RowCount(ctx context.Context, table string) (int64, error)
	// Max returns max(column) of table, nil when it is empty.
	Max(ctx context.Context, table, column string) (any, error)
}

// StoreTx is a write transaction of the Store.
type StoreTx interface {
	// Replace replaces the table's rows (and columns) with rd's.
	Replace(table string, rd array.RecordReader) (int64, error)
	// Append inserts the rows of rd that the table does not hold yet.
	Append(table string, rd array.RecordReader, opt AppendOptions) (int64, error)
	// Delete removes rows whose key columns equal a row of keys.
	Delete(table string, keys array.RecordReader) (int64, error)
	// Insert inserts every row of rows, matching columns by name.
	Insert(table string, rows array.RecordReader) (int64, error)
	// Materialize replaces the table with the result of a query.
	Materialize(table, query string) (int64, error)
	// SetWatermark records lsn as the position of each dataset's data, in this
	// transaction.
	SetWatermark(lsn position.LSN, datasets ...string) error
	// TableExists reports whether the table exists in this transaction.
	TableExists(table string) (bool, error)
	// Exec runs a statement (schema changes).
	Exec(query string) error
}

// AppendOptions say how Append recognises rows it already holds.
type AppendOptions struct {
	// Key columns identify a row; a row whose key is present is skipped, or
	// replaces the present one when Upsert is set (on_conflict: upsert).
	Key    []string
	Upsert bool
	// Without a Key, rows are compared whole, as a multiset, against the local rows
	// whose Column is >= Since (the overlap window): a row read again is dropped, a
	// genuinely new duplicate is kept.
	Column string
	Since  any
}

// StoreQuery is one read.
type StoreQuery struct {
	// SQL must be exactly one SELECT statement; placeholders bind Args.
	SQL  string
	Args []any
	// Temp exposes rows under a name for this query only; the engine uses it to
	// read a dataset from its source while its acceleration is not loaded. The
	// readers are consumed and released.
	Temp map[string]array.RecordReader
}

// Result is a fully read query result. Release it when done.
type Result struct {
	Schema  *arrow.Schema
	Records []arrow.RecordBatch
	Rows    int64
	Bytes   int64

	// Filled in by the engine.
	Position position.LSN // the source position the answer reflects (0: unknown)
	Cache    CacheStatus  // hit, miss or bypass
}

// Retain adds a reference to every record (for sharing a cached result).
func (r *Result) Retain() {
	for _, rec := range r.Records {
		rec.Retain()
	}
}

// Release drops a reference to every record.
func (r *Result) Release() {
	for _, rec := range r.Records {
		rec.Release()
	}
}

// CacheStatus says whether an answer came from the results cache.
type CacheStatus string

// Cache statuses, as upstream reports them in Results-Cache-Status.
const (
	CacheHit    CacheStatus = "HIT"
	CacheMiss   CacheStatus = "MISS"
	CacheBypass CacheStatus = "BYPASS"
)
