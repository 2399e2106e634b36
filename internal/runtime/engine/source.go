package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// Source reads one dataset from where it lives (a Postgres table, another runtime).
// Connectors implement it; the engine calls it for full and append refreshes and, for
// datasets that are not loaded yet with ready_state on_registration, per query.
type Source interface {
	// Scan reads the rows selected by req from one consistent snapshot of the source
	// and calls fn once with a reader over them. The reader streams in batches and
	// is valid only until fn returns; fn must not retain it. Snapshot.Position is
	// the source position the rows reflect (zero when the source cannot tell).
	Scan(ctx context.Context, req ScanRequest, fn func(Snapshot) error) error
	// Close releases connections. It is safe to call more than once.
	Close()
}

// ScanRequest narrows a scan. The zero value reads every row.
type ScanRequest struct {
	// Where is a boolean SQL expression in the source's own dialect (the WHERE
	// clause of refresh_sql), applied by the source. Empty means no filter.
	Where string
	// Since, when set, selects only rows whose Column is >= Value (append refresh
	// with overlap, refresh_data_window).
	Since *Bound
	// Columns, when set, selects only these columns (refresh_sql's select list).
	Columns []string
	// OrderBy and Limit are refresh_sql's ORDER BY list (verbatim, in the
	// source's dialect) and LIMIT, applied after Where and Since. Empty and 0
	// mean none.
	OrderBy string
	Limit   int64
}

// Bound is a lower bound on one column. Value is a time.Time for timestamp and date
// columns, an int64 for unix_seconds/unix_millis columns, or a string.
type Bound struct {
	Column string
	Value  any
}

// Snapshot is what a scan yields: the rows and the position they reflect.
type Snapshot struct {
	Reader   array.RecordReader
	Position position.LSN
}

// Notifier is implemented by sources that can tell when their data changed, such
// as a chained runtime that pushes change notices. The engine refreshes the dataset
// on every notice, in addition to refresh_check_interval. Watch blocks until ctx
// ends, reconnecting on its own; it returns an error only when the source cannot
// notify at all (the engine then relies on the interval).
type Notifier interface {
	Watch(ctx context.Context, changed func()) error
}
