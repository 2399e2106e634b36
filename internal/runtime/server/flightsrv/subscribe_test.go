//go:build duckdb_arrow

package flightsrv_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// subscribe opens DoExchange with desc as the first message and returns a
// reader of the answer; the server's refusals surface here.
func subscribe(ctx context.Context, c flight.Client, desc *flight.FlightDescriptor) (*flight.Reader, error) {
	ex, err := c.DoExchange(ctx)
	if err != nil {
		return nil, err
	}
	if err := ex.Send(&flight.FlightData{FlightDescriptor: desc}); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if err := ex.CloseSend(); err != nil {
		return nil, err
	}
	return flight.NewRecordReader(ex)
}

func subscribeTo(name string) *flight.FlightDescriptor {
	return &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: wire.SubscribeRequest{Subscribe: name}.Encode()}
}

// message is one message of a subscription stream after the schema.
type message struct {
	meta wire.SubscriptionMeta
	rows []string
}

func next(t *testing.T, rd *flight.Reader) message {
	t.Helper()
	if !rd.Next() {
		t.Fatalf("subscription ended: %v", rd.Err())
	}
	meta, err := wire.DecodeSubscriptionMeta(rd.LatestAppMetadata())
	if err != nil {
		t.Fatal(err)
	}
	return message{meta: meta, rows: recordRows(rd.RecordBatch())}
}

// withoutSubscriptions hides the engine's Subscribe, as a runtime without
// subscriptions has none.
type withoutSubscriptions struct{ flightsrv.Engine }

func TestSubscribeRefusals(t *testing.T) {
	r := newRecipe(t, nil, withKeys(testKey))
	bare := runtimetest.StartServer(t, withoutSubscriptions{r.engine}, r.mem, withKeys(testKey))
	authed := metadata.AppendToOutgoingContext(testContext(t), "x-api-key", testKey)
	for _, tc := range []struct {
		name  string
		srv   *flightsrv.Server
		ctx   context.Context
		desc  *flight.FlightDescriptor
		code  codes.Code
		parts []string
	}{
		{name: "no credentials", srv: r.srv, ctx: testContext(t), desc: subscribeTo("rankings"), code: codes.Unauthenticated},
		{name: "SQL text", srv: r.srv, ctx: authed, desc: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("select 1")},
			code: codes.InvalidArgument, parts: []string{"subscriptions only", `{"subscribe"`}},
		{name: "a path", srv: r.srv, ctx: authed, desc: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"rankings"}},
			code: codes.InvalidArgument, parts: []string{"subscriptions only"}},
		{name: "a misspelt command", srv: r.srv, ctx: authed, desc: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"subscrbe": "rankings"}`)},
			code: codes.InvalidArgument, parts: []string{`{"subscribe": "rankings"}`}},
		{name: "a runtime without subscriptions", srv: bare, ctx: authed, desc: subscribeTo("rankings"),
			code: codes.Unimplemented, parts: []string{"no subscriptions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newPlainClient(t, tc.srv)
			rd, err := subscribe(tc.ctx, c, tc.desc)
			if err == nil {
				rd.Release()
			}
			wantCode(t, err, tc.code, tc.parts...)
		})
	}
}

// TestSubscriptionStream reads the protocol as a plain Flight client would: the
// snapshot with its position and mode, a commit marker, then a change as
// retractions and insertions, the last saying commit, then heartbeats while
// idle. Applying
// the change to the snapshot gives the view's new rows.
func TestSubscriptionStream(t *testing.T) {
	r := newRecipe(t, nil, func(s *flightsrv.Server) { s.HeartbeatInterval = 20 * time.Millisecond })
	c := newPlainClient(t, r.srv)
	ctx := testContext(t)
	rd, err := subscribe(ctx, c, subscribeTo("rankings"))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	if got, want := fieldNames(rd.Schema()), []string{"name", "count"}; !equal(got, want) {
		t.Errorf("schema=%q, want %q", got, want)
	}

	var held []string
	m := next(t, rd)
	if m.meta.Kind != wire.KindSnapshot || m.meta.Position != 100 || m.meta.Mode == "" {
		t.Fatalf("first message=%+v, want a snapshot at 0/64 with a mode", m.meta)
	}
	for ; m.meta.Kind == wire.KindSnapshot; m = next(t, rd) {
		held = append(held, m.rows...)
	}
	if m.meta.Kind != wire.KindCommit || m.meta.Position != 100 || len(m.rows) != 0 {
		t.Fatalf("after the snapshot=%+v with %d rows, want an empty commit at 0/64", m.meta, len(m.rows))
	}
	if slices.Sort(held); !equal(held, sorted(wantRankings)) {
		t.Fatalf("snapshot=%q, want %q", held, wantRankings)
	}

	// The change may arrive as several steps (the view's position is the least
	// of its inputs', and they refresh one after the other): apply them all up
	// to the change's position.
	r.changeOrders(t, 200)
	sawInsert, commits := false, 0
	for done := false; !done; {
		m = next(t, rd)
		switch m.meta.Kind {
		case wire.KindDelete:
			if sawInsert {
				t.Fatalf("a delete after an insert in one change")
			}
			for _, row := range m.rows {
				i := slices.Index(held, row)
				if i < 0 {
					t.Fatalf("retracted %q, which the subscriber does not hold (%q)", row, held)
				}
				held = slices.Delete(held, i, i+1)
			}
		case wire.KindInsert:
			sawInsert = true
			held = append(held, m.rows...)
		case wire.KindCommit:
			t.Fatalf("a commit marker at %s: the server ends a change on its last batch", m.meta.Position)
		case wire.KindProgress, wire.KindHeartbeat:
		default:
			t.Fatalf("unexpected %+v after the snapshot", m.meta)
		}
		if m.meta.Commit {
			sawInsert = false
			commits++
		}
		done = m.meta.Position >= 200 && (m.meta.Commit || m.meta.Kind == wire.KindProgress)
	}
	if commits == 0 {
		t.Errorf("no batch of the change said commit")
	}
	if slices.Sort(held); !equal(held, sorted(wantChangedRankings)) {
		t.Errorf("after the change=%q, want %q", held, wantChangedRankings)
	}

	// Idle: heartbeats (which a reader never sees as rows) keep coming.
	heartbeats := 0
	for heartbeats < 2 {
		if !rd.Next() {
			t.Fatalf("subscription ended while idle: %v", rd.Err())
		}
		if meta, err := wire.DecodeSubscriptionMeta(rd.LatestAppMetadata()); err == nil && meta.Kind == wire.KindHeartbeat {
			heartbeats++
			if rd.RecordBatch().NumRows() != 0 {
				t.Fatalf("a heartbeat with %d rows", rd.RecordBatch().NumRows())
			}
		}
	}
}

// TestSubscriptionEndsWhenTheServerCloses: closing the server ends the stream
// with Unavailable, so the subscriber subscribes again elsewhere or later.
func TestSubscriptionEndsWhenTheServerCloses(t *testing.T) {
	r := newRecipe(t, nil, nil)
	c := newPlainClient(t, r.srv)
	rd, err := subscribe(testContext(t), c, subscribeTo("rankings"))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	for m := next(t, rd); m.meta.Kind != wire.KindCommit; m = next(t, rd) {
	}
	runtimetest.StopServer(t, r.srv)
	for rd.Next() {
	}
	wantCode(t, rd.Err(), codes.Unavailable, "shutting down")
}

var _ flightsrv.Subscriber = (*engine.Engine)(nil)

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestSubscriptionEndings: why the engine ends a subscription becomes the gRPC
// code a subscriber acts on (all but Unimplemented: subscribe again).
func TestSubscriptionEndings(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code codes.Code
	}{
		{engine.ErrSubscriberTooSlow, codes.ResourceExhausted},
		{engine.ErrMaintenanceFailed, codes.Unavailable},
		{engine.ErrResync, codes.Aborted},
		{engine.ErrClosed, codes.Unavailable},
		{engine.ErrNotSubscribable, codes.Unimplemented},
		{engine.ErrUnknownDataset, codes.NotFound},
	} {
		err := flightsrv.ToStatus(slog.Default(), "DoExchange", fmt.Errorf("subscription to rankings: %w", tc.err))
		wantCode(t, err, tc.code, tc.err.Error())
	}
}
