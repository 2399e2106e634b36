package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
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
	// CheckView refuses a view's query unless it is one read-only SELECT, by
	// the guard user queries pass; the tables it reads need not exist yet.
	CheckView(ctx context.Context, query string) error
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

// Parser is implemented by stores that check a user query when they parse it:
// Parse refuses what users may not run (anything but one SELECT, the store's
// internals) and reports what the query reads, for admission. The engine falls
// back to Tables, treating every query as heavy, when the store has no Parse.
type Parser interface {
	Parse(ctx context.Context, query string) (Parsed, error)
}

// Parsed is what a query text reads.
type Parsed struct {
	// Tables are the tables and views read, as written (CTEs left out).
	Tables []string
	// TableFunctions is set when the query calls a table function (range(),
	// say): its cost does not depend on the accelerated data.
	TableFunctions bool
}

// StoreTx is a write transaction of the Store. Its methods name operations; the
// Store writes the SQL.
type StoreTx interface {
	// Replace replaces the table's rows (and columns) with rd's.
	Replace(table string, rd array.RecordReader) (int64, error)
	// Append inserts the rows of rd that the table does not hold yet.
	Append(table string, rd array.RecordReader, opt AppendOptions) (int64, error)
	// ApplyChanges applies one batch of net row changes to the table.
	ApplyChanges(table string, c Changes) error
	// ApplyDiff applies a change of the table's rows as a multiset (a Diff of a
	// subscription): each row of del removes exactly one equal local row (NULLs
	// equal), then every row of ins is inserted, columns matched by name. A row
	// of del without an equal local row fails the whole transaction: the table no
	// longer matches its source. The caller keeps the readers; either may be nil.
	ApplyDiff(table string, del, ins array.RecordReader) error
	// Materialize replaces the table with the result of a query.
	Materialize(table, query string) (int64, error)
	// CreateIndex creates an index on the table's columns unless one of the same
	// name exists; unique makes it refuse duplicate keys.
	CreateIndex(table string, columns []string, unique bool) error
	// DeleteOlderThan removes the rows whose column is below bound (a time or
	// number as Literal renders it) and returns how many went.
	DeleteOlderThan(table, column string, bound any) (int64, error)
	// SetWatermark records lsn as the position of each dataset's data, in this
	// transaction.
	SetWatermark(lsn position.LSN, datasets ...string) error
	// SetFingerprint records, in this transaction, an opaque description of the
	// source columns the dataset's table was loaded with (a change feed's
	// bookkeeping); it replaces the one recorded before.
	SetFingerprint(dataset, fingerprint string) error
	// TableExists reports whether the table exists in this transaction.
	TableExists(table string) (bool, error)
}

// Changes is one batch of net row changes to a table, applied in this order:
// the Complete rows are filled in from the table as it was before the batch,
// then Truncate, Delete and Insert run, then the completed rows are inserted.
// The caller keeps ownership of the readers; Delete and Insert may be nil.
type Changes struct {
	// Truncate removes every row first.
	Truncate bool
	// Delete holds only key columns: the rows whose key equals one of its rows
	// are removed.
	Delete array.RecordReader
	// Insert holds whole rows, inserted matching columns by name.
	Insert array.RecordReader
	// Key names the table's key columns, for Complete.
	Key []string
	// Complete holds rows that lack some of the table's columns (values the
	// source did not send because they did not change). Each reader carries some
	// of the table's columns followed by one column per Key column (named apart
	// from the table's columns) holding the key of the local row the missing
	// values are taken from. A missing local row fails the whole batch.
	Complete []array.RecordReader
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
	// MaxBytes, when set, bounds the result below the store's own limit.
	MaxBytes int64
	// User marks a client's query (the engine sets it): besides being one
	// SELECT, it may not read the store's internals or introspect the host.
	// The runtime's own bookkeeping reads leave it unset.
	User bool
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
	// Memo, on results from the results cache, is shared by every answer from
	// the same entry: what a server derives from the result (its encoding) is
	// kept there. nil otherwise.
	Memo *Memo
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
	CacheHit    CacheStatus = wire.CacheHit
	CacheMiss   CacheStatus = wire.CacheMiss
	CacheBypass CacheStatus = wire.CacheBypass
)
