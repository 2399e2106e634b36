// Package localpod is the localpod connector, upstream's `from: localpod:<dataset>`:
// a dataset that reads another dataset (its parent) of the same runtime, for a
// second acceleration of the same data (a file-mode parent and an in-memory
// child, a child holding a refresh_sql subset) that reads the source once.
//
// Wiring, in cmd/dataruntime, once the engine exists:
//
//	src := localpod.NewSource(eng, "orders") // the parent's name
//	eng.AddDataset(ds, src)
//
// A scan is a query of the parent through the engine (bypassing the results
// cache), narrowed by the child's refresh_sql and append bound; its position is
// the parent's watermark. Watch calls back whenever the parent's watermark, its
// refresh count or its last refresh time changes, so the child refreshes in step
// with its parent in every refresh mode (full, append, and a parent served by a
// change feed), besides its own refresh_check_interval. Unlike upstream, which
// synchronizes only full/full pairs and silently falls back otherwise, the child
// here always follows.
package localpod

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// Engine is what a localpod source needs of the runtime's engine.
type Engine interface {
	Query(ctx context.Context, q engine.Query) (*engine.Result, error)
	Changed() <-chan struct{}
	StatusOf(ctx context.Context, name string) (engine.Status, error)
}

// Source reads the parent dataset. It implements engine.Source and
// engine.Notifier.
type Source struct {
	eng    Engine
	parent string
}

var (
	_ engine.Source   = (*Source)(nil)
	_ engine.Notifier = (*Source)(nil)
)

// NewSource returns a Source that reads the dataset parent of eng.
func NewSource(eng Engine, parent string) *Source {
	return &Source{eng: eng, parent: parent}
}

// Close does nothing: the parent belongs to the engine.
func (s *Source) Close() {}

// Scan queries the parent, narrowed by req, and hands the rows to fn.
func (s *Source) Scan(ctx context.Context, req engine.ScanRequest, fn func(engine.Snapshot) error) error {
	sql, err := engine.ScanSQL(engine.Ident(s.parent), req.Columns, req)
	if err != nil {
		return err
	}
	if err := s.waitParent(ctx); err != nil {
		return err
	}
	res, err := s.eng.Query(ctx, engine.Query{SQL: sql, NoCache: true})
	if err != nil {
		return fmt.Errorf("read localpod:%s: %w", s.parent, err)
	}
	defer res.Release()
	rd, err := array.NewRecordReader(res.Schema, res.Records)
	if err != nil {
		return fmt.Errorf("read localpod:%s: %w", s.parent, err)
	}
	defer rd.Release()
	return fn(engine.Snapshot{Reader: rd, Position: res.Position})
}

// waitParent waits while the parent's first load runs, so that a child loads
// right after its parent instead of failing and retrying. A parent whose first
// load failed is not waited for: the child's load fails with the parent's error.
func (s *Source) waitParent(ctx context.Context) error {
	for {
		ch := s.eng.Changed()
		st, err := s.eng.StatusOf(ctx, s.parent)
		if err != nil {
			return fmt.Errorf("read localpod:%s: %w", s.parent, err)
		}
		if st.Ready || st.State == engine.StateError {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// state is what changes when the parent's data does.
type state struct {
	watermark uint64
	refreshes int64
	last      time.Time
}

func (s *Source) state(ctx context.Context) (state, error) {
	st, err := s.eng.StatusOf(ctx, s.parent)
	if err != nil {
		return state{}, err
	}
	out := state{watermark: uint64(st.Watermark), refreshes: st.Refreshes}
	if st.LastRefresh != nil {
		out.last = *st.LastRefresh
	}
	return out, nil
}

// Watch calls changed after every change of the parent's data, until ctx ends.
// The child's own refreshes change the engine too, but not the parent's state,
// so they do not loop back.
func (s *Source) Watch(ctx context.Context, changed func()) error {
	ch := s.eng.Changed()
	last, err := s.state(ctx)
	if err != nil {
		return fmt.Errorf("watch localpod:%s: %w", s.parent, err)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ch:
		}
		ch = s.eng.Changed() // before reading, so no change slips between
		cur, err := s.state(ctx)
		if err != nil {
			if errors.Is(err, engine.ErrClosed) || ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("watch localpod:%s: %w", s.parent, err)
		}
		if cur != last {
			last = cur
			changed()
		}
	}
}
