package flightsqlsrc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// ReadyWait bounds how long opening a subscription waits for the connection
// to the upstream to be ready. A variable for tests.
var ReadyWait = 5 * time.Second

// errNotReady cancels a subscription whose connection was not ready within
// ReadyWait.
var errNotReady = errors.New("connection not ready")

// DefaultHeartbeatTimeout is how long a subscription stream may stay silent
// before the client drops it as dead: three of the server's heartbeat intervals.
const DefaultHeartbeatTimeout = 15 * time.Second

// ErrHeartbeatTimeout ends a subscription stream from which nothing arrived for
// the heartbeat timeout.
var ErrHeartbeatTimeout = errors.New("no message from the upstream within the heartbeat timeout")

// Stream is the client side of a subscription (see wire.SubscribeRequest). Read
// the snapshot with Snapshot first, then the changes with Next; Close ends it.
// A Stream is not safe for concurrent use, but Stop may be called from any
// goroutine to end a read in progress.
type Stream struct {
	// Position and Mode are the snapshot's position and the upstream's way of
	// maintaining the result ("incremental" or "recompute: <why>").
	Position position.LSN
	Mode     string
	// Order is the subscribed query's top-level ordering, as the snapshot
	// states it; empty when it has none.
	Order []wire.OrderKey

	rd      *flight.Reader
	cancel  context.CancelCauseFunc
	ctx     context.Context
	timer   *time.Timer
	timeout time.Duration
	first   arrow.RecordBatch // the snapshot's first batch, read by Subscribe
	done    bool              // the snapshot's commit marker was read
	armed   bool              // a message arrived: silence counts from now on
	closed  atomic.Bool
}

// Subscribe opens a subscription to table over c (ctx carries the credentials)
// and reads up to the snapshot's first batch. A server without subscriptions
// answers Unimplemented. After the first message, silence longer than timeout
// (DefaultHeartbeatTimeout when zero) ends the stream with ErrHeartbeatTimeout.
func Subscribe(ctx context.Context, c flight.Client, table string, since position.LSN, mem memory.Allocator, timeout time.Duration) (*Stream, error) {
	if timeout <= 0 {
		timeout = DefaultHeartbeatTimeout
	}
	ctx, cancel := context.WithCancelCause(ctx)
	s := &Stream{ctx: ctx, cancel: cancel, timeout: timeout}
	// Armed from the first message on: computing the snapshot may take the
	// upstream longer, and gRPC keepalives notice a dead peer meanwhile.
	s.timer = time.AfterFunc(time.Hour, func() { cancel(ErrHeartbeatTimeout) })
	s.timer.Stop()
	if err := s.open(c, table, since, mem); err != nil {
		s.Close()
		return nil, s.cause(err)
	}
	return s, nil
}

func (s *Stream) open(c flight.Client, table string, since position.LSN, mem memory.Allocator) error {
	// Wait, bounded, for the connection to be ready: while gRPC reconnects
	// after a partition or a restart, a call that does not wait fails at once,
	// and the feed's next attempt would come up to its back-off later than the
	// upstream's return. A waiting call starts as soon as the connection is up.
	ready := time.AfterFunc(ReadyWait, func() { s.cancel(errNotReady) })
	ex, err := c.DoExchange(s.ctx, grpc.WaitForReady(true))
	if !ready.Stop() && err == nil {
		return errNotReady // ready just as the wait ended; the stream is cancelled
	}
	if err != nil {
		return err
	}
	desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: wire.SubscribeRequest{Subscribe: table, Since: since}.Encode()}
	if err := ex.Send(&flight.FlightData{FlightDescriptor: desc}); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if err := ex.CloseSend(); err != nil {
		return err
	}
	rd, err := flight.NewRecordReader(ex, ipc.WithAllocator(mem))
	if err != nil {
		return err
	}
	s.rd = rd
	meta, rec, err := s.read()
	if err != nil {
		return err
	}
	if meta.Kind != wire.KindSnapshot {
		return fmt.Errorf("subscription to %s: the first message is %q, want %q", table, meta.Kind, wire.KindSnapshot)
	}
	rec.Retain()
	s.first, s.Position, s.Mode, s.Order = rec, meta.Position, meta.Mode, meta.Order
	return nil
}

// Schema is the schema of every batch of the stream.
func (s *Stream) Schema() *arrow.Schema { return s.rd.Schema() }

// read returns the next message but heartbeats, with the batch valid until the
// next read.
func (s *Stream) read() (wire.SubscriptionMeta, arrow.RecordBatch, error) {
	for {
		// Only the wait for the upstream counts as silence, not this side's own
		// work between reads.
		if s.armed {
			s.timer.Reset(s.timeout)
		}
		ok := s.rd.Next()
		s.timer.Stop()
		s.armed = true
		if !ok {
			err := s.rd.Err()
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return wire.SubscriptionMeta{}, nil, s.cause(err)
		}
		meta, err := wire.DecodeSubscriptionMeta(s.rd.LatestAppMetadata())
		if err != nil {
			return meta, nil, err
		}
		if meta.Kind != wire.KindHeartbeat {
			return meta, s.rd.RecordBatch(), nil
		}
	}
}

// cause prefers the reason the stream's context was cancelled with (a heartbeat
// timeout) over the error it caused.
func (s *Stream) cause(err error) error {
	c := context.Cause(s.ctx)
	switch {
	case c == nil:
		return err
	case errors.Is(c, ErrHeartbeatTimeout):
		return fmt.Errorf("%w (%s)", ErrHeartbeatTimeout, s.timeout)
	case errors.Is(c, errNotReady):
		// Unavailable, as the call would have failed without waiting, with gRPC's
		// last connection error (the cancelled call's message carries it).
		return status.Errorf(codes.Unavailable, "no connection to the upstream within %s: %s", ReadyWait, status.Convert(err).Message())
	}
	return err
}

// Snapshot returns a reader over the snapshot's rows; it ends at the snapshot's
// commit marker. Read it once, before Next; Complete tells whether it was read
// to its end.
func (s *Stream) Snapshot() array.RecordReader {
	r := &snapshotReader{s: s}
	r.refs.Store(1)
	return r
}

// Complete reports whether the whole snapshot was read.
func (s *Stream) Complete() bool { return s.done }

// Change is one step of a subscription after its snapshot, as the engine
// publishes it: the rows that left and entered as of Position, or, when the
// diff is empty, progress (the rows hold as of Position). Release its Diff
// when done.
type Change = engine.SubscriptionEvent

// Next reads the next change: every delete and insert batch up to the one
// that says commit or a commit marker, or a progress marker.
func (s *Stream) Next() (Change, error) {
	if !s.done {
		return Change{}, errors.New("read the subscription's snapshot before its changes")
	}
	c := Change{Diff: engine.Diff{Schema: s.Schema()}}
	for {
		meta, rec, err := s.read()
		if err != nil {
			c.Diff.Release()
			return Change{}, err
		}
		switch meta.Kind {
		case wire.KindProgress:
			if !c.Diff.Empty() {
				c.Diff.Release()
				return Change{}, fmt.Errorf("subscription: a progress marker at %s inside a change at %s", meta.Position, c.Position)
			}
			return Change{Position: meta.Position, Diff: c.Diff}, nil
		case wire.KindCommit:
			c.Position = meta.Position
			return c, nil
		case wire.KindDelete, wire.KindInsert:
			c.Position = meta.Position
			rec.Retain()
			if meta.Kind == wire.KindDelete {
				c.Diff.Delete = append(c.Diff.Delete, rec)
			} else {
				c.Diff.Insert = append(c.Diff.Insert, rec)
			}
			if meta.Commit {
				return c, nil
			}
		default:
			c.Diff.Release()
			return Change{}, fmt.Errorf("subscription: unexpected %q message after the snapshot", meta.Kind)
		}
	}
}

// Stop ends the stream's reads: a Next in progress, in any goroutine, returns
// an error. It releases nothing; Close does, once no goroutine reads.
func (s *Stream) Stop() { s.cancel(context.Canceled) }

// Close ends the stream and releases what it holds. Call it once no goroutine
// reads the stream (Stop ends a read in progress). It is safe to call more
// than once.
func (s *Stream) Close() {
	if s.closed.Swap(true) {
		return
	}
	s.timer.Stop()
	s.cancel(context.Canceled)
	if s.first != nil {
		s.first.Release()
		s.first = nil
	}
	if s.rd != nil {
		s.rd.Release()
	}
}

// snapshotReader yields the snapshot's batches, up to its commit marker.
type snapshotReader struct {
	refs atomic.Int64
	s    *Stream
	cur  arrow.RecordBatch
	err  error
}

func (r *snapshotReader) Schema() *arrow.Schema { return r.s.Schema() }

func (r *snapshotReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || r.s.done {
		return false
	}
	if r.s.first != nil {
		r.cur, r.s.first = r.s.first, nil
		return true
	}
	meta, rec, err := r.s.read()
	switch {
	case err != nil:
		r.err = err
		return false
	case meta.Kind == wire.KindCommit && meta.Position == r.s.Position:
		r.s.done = true
		return false
	case meta.Kind != wire.KindSnapshot:
		r.err = fmt.Errorf("subscription: a %q message at %s inside the snapshot at %s", meta.Kind, meta.Position, r.s.Position)
		return false
	}
	rec.Retain()
	r.cur = rec
	return true
}

func (r *snapshotReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch, for array.RecordReader.
func (r *snapshotReader) Record() arrow.RecordBatch { return r.cur }

func (r *snapshotReader) Err() error { return r.err }

func (r *snapshotReader) Retain() { r.refs.Add(1) }

func (r *snapshotReader) Release() {
	if r.refs.Add(-1) == 0 && r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}
