package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
)

// Maintainer is implemented by stores that keep a query's result up to date as
// its inputs change, for subscriptions. The duckdb accelerator implements it.
type Maintainer interface {
	// Maintain starts maintaining query inside tx and returns it with the query's
	// result as of tx. A query that cannot be maintained incrementally is still
	// maintained, by recomputing it on each change; Mode says which, and why.
	Maintain(tx StoreTx, query string) (Maintained, *Result, error)
}

// Maintained is one query whose result a Store keeps up to date. Its state lives
// in the store, so a rolled-back transaction rolls it back too.
type Maintained interface {
	// Update brings the result up to date with what tx changed so far and returns
	// the rows that left and entered it. Call it in every write transaction, after
	// the transaction's changes and before its commit; it returns an empty Diff at
	// little cost when tx changed none of Inputs.
	Update(tx StoreTx) (Diff, error)
	// Committed tells whether the transaction of the last Update committed
	// (ok) or rolled back; the engine calls it after every transaction it
	// called Update in.
	Committed(ok bool)
	// Rows returns the result as of the last committed Update. The caller keeps
	// writes out meanwhile, so that it knows which position the rows reflect.
	Rows(ctx context.Context) (*Result, error)
	// Mode is "incremental: ...", or "recompute: <why not incremental>".
	Mode() string
	// Close stops maintaining the query and drops its state.
	Close(ctx context.Context) error
}

// Diff is a change of a multiset of rows: each row of Delete removes one equal
// row, each row of Insert adds one. Release it when done.
type Diff struct {
	Schema *arrow.Schema
	Delete []arrow.RecordBatch
	Insert []arrow.RecordBatch
}

// Empty reports whether the diff changes nothing.
func (d Diff) Empty() bool { return rows(d.Delete) == 0 && rows(d.Insert) == 0 }

// Rows is the number of rows deleted and inserted.
func (d Diff) Rows() (deleted, inserted int64) { return rows(d.Delete), rows(d.Insert) }

// Release drops a reference to every batch.
func (d Diff) Release() {
	for _, b := range d.Delete {
		b.Release()
	}
	for _, b := range d.Insert {
		b.Release()
	}
}

// Retain adds a reference to every batch (for sharing one diff among subscribers).
func (d Diff) Retain() {
	for _, b := range d.Delete {
		b.Retain()
	}
	for _, b := range d.Insert {
		b.Retain()
	}
}

func rows(bs []arrow.RecordBatch) int64 {
	var n int64
	for _, b := range bs {
		n += b.NumRows()
	}
	return n
}
