//go:build duckdb_arrow

package runtimetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// Source is an in-memory engine.Source: it serves fixed rows at a fixed position,
// both replaced with Set between refreshes. On demand it fails every scan (Fail)
// or the next few (FailNext), and holds the next few scans until released
// (BlockNext), so a test can catch the engine mid-load.
//
// A scan honours ScanRequest.Since (append refresh, refresh_data_window) by
// serving only rows whose column is >= the bound; Where and Columns are ignored.
// Every record it hands out is allocated from the allocator given to NewSource.
type Source struct {
	mem    memory.Allocator
	schema *arrow.Schema

	mu      sync.Mutex
	rows    [][]any
	rec     arrow.RecordBatch
	pos     position.LSN
	err     error // fails every scan
	failN   int   // the next failN scans fail with failErr
	failErr error
	blockN  int           // the next blockN scans wait for gate
	gate    chan struct{} // closed by the release function of BlockNext
	blocked int           // scans waiting for a gate now
	scans   int
	reqs    []engine.ScanRequest
}

var _ engine.Source = (*Source)(nil)

// NewSource returns a source of rows of schema, allocated from mem; it holds no
// rows until Set. Its memory is released at the end of the test.
func NewSource(tb testing.TB, mem memory.Allocator, schema *arrow.Schema) *Source {
	s := &Source{mem: mem, schema: schema}
	tb.Cleanup(s.Close)
	return s
}

// Set replaces the rows and the position. Values are int (for integer columns),
// string, float64, bool, time.Time (for timestamp columns) or nil.
func (s *Source) Set(tb testing.TB, pos position.LSN, rows ...[]any) {
	tb.Helper()
	rec, err := s.build(rows)
	if err != nil {
		tb.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec != nil {
		s.rec.Release()
	}
	s.rec, s.rows, s.pos = rec, rows, pos
}

// build makes one record of rows.
func (s *Source) build(rows [][]any) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(s.mem, s.schema)
	defer b.Release()
	for _, row := range rows {
		if len(row) != s.schema.NumFields() {
			return nil, fmt.Errorf("row %v has %d values, the schema %d columns", row, len(row), s.schema.NumFields())
		}
		for i, v := range row {
			if err := appendValue(b.Field(i), v); err != nil {
				return nil, fmt.Errorf("row %v column %s: %w", row, s.schema.Field(i).Name, err)
			}
		}
	}
	return b.NewRecordBatch(), nil
}

// Fail makes every scan fail with err (nil: succeed again).
func (s *Source) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// FailNext makes the next n scans fail with err; later ones succeed (unless Fail
// is set).
func (s *Source) FailNext(n int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failN, s.failErr = n, err
}

// BlockNext makes the next n scans wait until release is called (or their
// context ends); later ones go through. A held scan serves the rows set when it
// is released. Calling release more than once is harmless; it is also called at
// the end of the test.
func (s *Source) BlockNext(tb testing.TB, n int) (release func()) {
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	tb.Cleanup(release)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blockN, s.gate = n, gate
	return release
}

// Blocked returns how many scans are being held now.
func (s *Source) Blocked() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blocked
}

// Scans returns how many scans ran (or started).
func (s *Source) Scans() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scans
}

// Requests returns the requests of every scan so far, in order.
func (s *Source) Requests() []engine.ScanRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]engine.ScanRequest(nil), s.reqs...)
}

// Scan serves the rows set last, at the position set with them.
func (s *Source) Scan(ctx context.Context, req engine.ScanRequest, fn func(engine.Snapshot) error) error {
	if err := s.hold(ctx, req); err != nil {
		return err
	}
	s.mu.Lock()
	if err := s.failure(); err != nil {
		s.mu.Unlock()
		return err
	}
	rows, rec, pos := s.rows, s.rec, s.pos
	if rec != nil {
		rec.Retain()
	}
	s.mu.Unlock()
	if rec != nil {
		defer rec.Release()
	}
	if req.Since != nil {
		kept, err := since(s.schema, rows, req.Since)
		if err != nil {
			return err
		}
		if rec, err = s.build(kept); err != nil {
			return err
		}
		defer rec.Release()
	}
	var recs []arrow.RecordBatch
	if rec != nil {
		recs = append(recs, rec)
	}
	rd, err := array.NewRecordReader(s.schema, recs) // retains the record
	if err != nil {
		return err
	}
	defer rd.Release()
	return fn(engine.Snapshot{Reader: rd, Position: pos})
}

// hold counts the scan and, when it is one of the next BlockNext ones, waits for
// its release.
func (s *Source) hold(ctx context.Context, req engine.ScanRequest) error {
	s.mu.Lock()
	s.scans++
	s.reqs = append(s.reqs, req)
	var gate chan struct{}
	if s.blockN > 0 {
		s.blockN--
		gate = s.gate
		s.blocked++
	}
	s.mu.Unlock()
	if gate == nil {
		return nil
	}
	defer func() {
		s.mu.Lock()
		s.blocked--
		s.mu.Unlock()
	}()
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// failure returns the error this scan fails with, if any. s.mu must be held.
func (s *Source) failure() error {
	if s.err != nil {
		return s.err
	}
	if s.failN > 0 {
		s.failN--
		return s.failErr
	}
	return nil
}

// since returns the rows whose column b.Column is >= b.Value.
func since(schema *arrow.Schema, rows [][]any, b *engine.Bound) ([][]any, error) {
	idx := schema.FieldIndices(b.Column)
	if len(idx) != 1 {
		return nil, fmt.Errorf("scan since %s: no such column", b.Column)
	}
	var out [][]any
	for _, row := range rows {
		ge, err := atLeast(row[idx[0]], b.Value)
		if err != nil {
			return nil, fmt.Errorf("scan since %s: %w", b.Column, err)
		}
		if ge {
			out = append(out, row)
		}
	}
	return out, nil
}

// atLeast compares a row's value with a bound: v >= bound. A null is never.
func atLeast(v, bound any) (bool, error) {
	if v == nil {
		return false, nil
	}
	switch b := bound.(type) {
	case int64:
		if x, ok := v.(int); ok {
			return int64(x) >= b, nil
		}
	case int32:
		if x, ok := v.(int); ok {
			return int64(x) >= int64(b), nil
		}
	case time.Time:
		if x, ok := v.(time.Time); ok {
			return !x.Before(b), nil
		}
	case string:
		if x, ok := v.(string); ok {
			return x >= b, nil
		}
	}
	return false, fmt.Errorf("cannot compare a %T with a bound of %T", v, bound)
}

func appendValue(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	var ok bool
	switch b := b.(type) {
	case *array.Int32Builder:
		var x int
		if x, ok = v.(int); ok {
			b.Append(int32(x))
		}
	case *array.Int64Builder:
		var x int
		if x, ok = v.(int); ok {
			b.Append(int64(x))
		}
	case *array.StringBuilder:
		var x string
		if x, ok = v.(string); ok {
			b.Append(x)
		}
	case *array.Float64Builder:
		var x float64
		if x, ok = v.(float64); ok {
			b.Append(x)
		}
	case *array.BooleanBuilder:
		var x bool
		if x, ok = v.(bool); ok {
			b.Append(x)
		}
	case *array.TimestampBuilder:
		var x time.Time
		if x, ok = v.(time.Time); ok {
			ts, err := arrow.TimestampFromTime(x, b.Type().(*arrow.TimestampType).Unit)
			if err != nil {
				return err
			}
			b.Append(ts)
		}
	default:
		return fmt.Errorf("builder %T not supported", b)
	}
	if !ok {
		return fmt.Errorf("a %T does not fit a %T", v, b)
	}
	return nil
}

// Close releases the rows.
func (s *Source) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec != nil {
		s.rec.Release()
		s.rec = nil
	}
}
