package flightsrv

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// DefaultHeartbeatInterval is how long a subscription stream stays silent before
// the server sends a heartbeat marker, so that clients notice a dead peer.
const DefaultHeartbeatInterval = 5 * time.Second

// Subscriber is implemented by engines that serve subscriptions;
// *engine.Engine does. A server whose engine lacks it answers DoExchange with
// Unimplemented, as a server without subscriptions does.
type Subscriber interface {
	SubscribeSince(ctx context.Context, name string, since position.LSN) (*engine.Subscription, error)
}

// DoExchange serves subscriptions (see wire.SubscribeRequest for the protocol):
// the first message's descriptor names the dataset or view; the answer is its
// snapshot, then its changes, until the client cancels, falls too far behind
// (ResourceExhausted) or the server closes (Unavailable).
func (v *service) DoExchange(stream flight.FlightService_DoExchangeServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	desc := first.GetFlightDescriptor()
	if desc.GetType() != flight.DescriptorCMD || !wire.IsSubscribeRequest(desc.GetCmd()) {
		return invalidf(`DoExchange serves subscriptions only: send a CMD descriptor {"subscribe": "<dataset or view>"} in the first message`)
	}
	req, err := wire.DecodeSubscribeRequest(desc.GetCmd())
	if err != nil {
		return invalidf("%v", err)
	}
	sub, ok := v.s.engine.(Subscriber)
	if !ok {
		return status.Error(codes.Unimplemented, "this runtime serves no subscriptions; read the table with a query")
	}
	s, err := sub.SubscribeSince(stream.Context(), req.Subscribe, req.Since)
	if err != nil {
		if cerr := stream.Context().Err(); cerr != nil {
			return cerr // the client went away while the snapshot was computed
		}
		return err
	}
	defer s.Close()
	return v.s.serveSubscription(stream, req.Subscribe, s)
}

// subscriptionStream writes one subscription's messages: record batches of one
// schema, each with its metadata.
type subscriptionStream struct {
	w      *flight.Writer
	schema *arrow.Schema
	empty  arrow.RecordBatch // zero rows, for markers
	sent   time.Time
}

func (s *Server) serveSubscription(stream flight.FlightService_DoExchangeServer, name string, sub *engine.Subscription) error {
	ctx := stream.Context()
	snap := sub.Snapshot
	sub.Snapshot = nil
	if snap == nil {
		return fmt.Errorf("subscribe to %s: the engine returned no snapshot", name)
	}
	setHeader(ctx, sub.Position, engine.CacheBypass)
	out := &subscriptionStream{
		w:      flight.NewRecordWriter(stream, ipc.WithSchema(snap.Schema), ipc.WithAllocator(s.Allocator)),
		schema: snap.Schema,
	}
	b := array.NewRecordBuilder(s.Allocator, snap.Schema)
	out.empty = b.NewRecordBatch()
	b.Release()
	defer func() {
		out.empty.Release()
		out.w.Close()
	}()
	s.Logger.Info("subscription started", logTable, name, logLSN, sub.Position, logMode, sub.Mode)
	err := out.snapshot(snap, wire.SubscriptionMeta{Kind: wire.KindSnapshot, Position: sub.Position, Mode: sub.Mode,
		Order: s.ordering(ctx, name, snap.Schema)})
	snap.Release()
	if err != nil {
		return err
	}
	heartbeat := time.NewTimer(s.HeartbeatInterval)
	defer heartbeat.Stop()
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				return subscriptionEnded(name, sub.Err())
			}
			err := out.event(ev)
			ev.Diff.Release()
			if err != nil {
				return err
			}
		case <-heartbeat.C:
			if time.Since(out.sent) >= s.HeartbeatInterval {
				if err := out.marker(wire.SubscriptionMeta{Kind: wire.KindHeartbeat}); err != nil {
					return err
				}
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-s.ctx.Done():
			return ErrShuttingDown
		}
		heartbeat.Reset(max(s.HeartbeatInterval-time.Since(out.sent), time.Millisecond))
	}
}

// subscriptionEnded explains why the engine ended a subscription.
func subscriptionEnded(name string, err error) error {
	switch {
	case err == nil:
		return fmt.Errorf("subscription to %s ended: %w", name, engine.ErrClosed)
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "subscription to "+name+" was cancelled")
	}
	return fmt.Errorf("subscription to %s: %w", name, err)
}

// ordering is the subscribed result's top-level ORDER BY, if Ordering tells.
func (s *Server) ordering(ctx context.Context, name string, schema *arrow.Schema) []wire.OrderKey {
	if s.Ordering == nil {
		return nil
	}
	cols := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = f.Name
	}
	return s.Ordering(ctx, name, cols)
}

// snapshot sends the snapshot's rows (one empty batch when it has none), each
// with m, then a commit marker at its position.
func (o *subscriptionStream) snapshot(snap *engine.Result, m wire.SubscriptionMeta) error {
	pos, meta := m.Position, m.Encode()
	sent := false
	for _, rec := range snap.Records {
		if rec.NumRows() == 0 && sent {
			continue
		}
		if err := o.write(rec, meta); err != nil {
			return err
		}
		sent = true
	}
	if !sent {
		if err := o.write(o.empty, meta); err != nil {
			return err
		}
	}
	return o.marker(wire.SubscriptionMeta{Kind: wire.KindCommit, Position: pos})
}

// event sends one engine event: its deletes, then its inserts, the last of
// them saying commit, or a progress marker when it changes nothing.
func (o *subscriptionStream) event(ev engine.SubscriptionEvent) error {
	if ev.Diff.Empty() {
		return o.marker(wire.SubscriptionMeta{Kind: wire.KindProgress, Position: ev.Position})
	}
	type part struct {
		kind string
		rec  arrow.RecordBatch
	}
	var parts []part
	for _, rec := range ev.Diff.Delete {
		if rec.NumRows() > 0 {
			parts = append(parts, part{wire.KindDelete, rec})
		}
	}
	for _, rec := range ev.Diff.Insert {
		if rec.NumRows() > 0 {
			parts = append(parts, part{wire.KindInsert, rec})
		}
	}
	for i, p := range parts {
		meta := wire.SubscriptionMeta{Kind: p.kind, Position: ev.Position, Commit: i == len(parts)-1}
		if err := o.write(p.rec, meta.Encode()); err != nil {
			return err
		}
	}
	return nil
}

func (o *subscriptionStream) marker(m wire.SubscriptionMeta) error {
	return o.write(o.empty, m.Encode())
}

// write sends rec with meta. A batch whose schema differs from the stream's only
// in names or metadata is sent under the stream's; other differences end the
// stream, and the client subscribes again to receive the new columns. (The
// engine's diffs carry the snapshot's types: the store reads both alike.)
func (o *subscriptionStream) write(rec arrow.RecordBatch, meta []byte) error {
	if !rec.Schema().Equal(o.schema) {
		if !sameTypes(rec.Schema(), o.schema) {
			return status.Errorf(codes.Unavailable, "the subscribed result's columns changed from %s to %s; subscribe again", o.schema, rec.Schema())
		}
		rec = array.NewRecordBatch(o.schema, rec.Columns(), rec.NumRows())
		defer rec.Release()
	}
	if err := o.w.WriteWithAppMetadata(rec, meta); err != nil {
		return err
	}
	o.sent = time.Now()
	return nil
}

func sameTypes(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.NumFields() {
		if !arrow.TypeEqual(a.Field(i).Type, b.Field(i).Type) {
			return false
		}
	}
	return true
}
