//go:build duckdb_arrow

package flightsrv_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// stream is one DoGet answer as it came over the wire.
type stream struct {
	msgs  [][]byte // each FlightData, marshalled
	data  []*flight.FlightData
	pos   position.LSN
	cache string
}

// rawDoGet reads ticket's answer message by message, without decoding it.
func rawDoGet(t *testing.T, ctx context.Context, c *flightsql.Client, ticket []byte) stream {
	t.Helper()
	var md metadata.MD
	s, err := c.Client.DoGet(ctx, &flight.Ticket{Ticket: ticket}, grpc.Header(&md))
	if err != nil {
		t.Fatal(err)
	}
	var out stream
	for {
		fd, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(fd)
		if err != nil {
			t.Fatal(err)
		}
		out.msgs = append(out.msgs, b)
		out.data = append(out.data, fd)
	}
	out.pos = positionOf(t, md)
	out.cache = md.Get(wire.MetadataCacheStatus)[0]
	return out
}

func sameBytes(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// replay feeds received messages to a flight.Reader.
type replay []*flight.FlightData

func (r *replay) Recv() (*flight.FlightData, error) {
	if len(*r) == 0 {
		return nil, io.EOF
	}
	m := (*r)[0]
	*r = (*r)[1:]
	return m, nil
}

// decoded returns the rows of a stream and the SQL type name of its first
// column, as a Flight SQL client reads them.
func decoded(t *testing.T, s stream) ([]string, string) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	msgs := replay(s.data)
	rd, err := flight.NewRecordReader(&msgs, ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	typ, _ := rd.Schema().Field(0).Metadata.GetValue("ARROW:FLIGHT:SQL:TYPE_NAME")
	return rows(t, rd), typ
}

// TestCachedAnswerIsSentAsTheSameBytes: a results-cache hit is sent as the
// messages encoded for its entry, byte for byte what the encoder sends for the
// same result without the cache, over plain Flight and Flight SQL alike; the
// headers still carry each answer's own position and cache status, and a change
// makes a new encoding.
func TestCachedAnswerIsSentAsTheSameBytes(t *testing.T) {
	r := newRecipe(t, func(e *engine.Engine) { e.Cache = engine.NewCache(0, time.Minute) }, nil)
	c := newClient(t, r.srv)
	ctx := testContext(t)
	const q = "select name, count from rankings order by count desc limit 5"

	miss := rawDoGet(t, ctx, c, []byte(q))
	hit := rawDoGet(t, ctx, c, []byte(q))
	hit2 := rawDoGet(t, ctx, c, []byte(q))
	bypass := rawDoGet(t, metadata.AppendToOutgoingContext(ctx, wire.MetadataCacheControl, "no-cache"), c, []byte(q))
	for _, tc := range []struct {
		name      string
		got       stream
		wantCache string
	}{
		{"miss", miss, "MISS"},
		{"hit", hit, "HIT"},
		{"second hit", hit2, "HIT"},
		{"no-cache", bypass, "BYPASS"},
	} {
		if got, want := tc.got.cache, tc.wantCache; got != want {
			t.Errorf("%s: cache=%s, want %s", tc.name, got, want)
		}
		if got, want := tc.got.pos, position.LSN(100); got != want {
			t.Errorf("%s: position=%s, want %s", tc.name, got, want)
		}
		if got, want := len(tc.got.msgs), 2; got != want {
			t.Errorf("%s: %d messages, want %d (schema, one batch)", tc.name, got, want)
		}
		if !sameBytes(tc.got.msgs, bypass.msgs) {
			t.Errorf("%s: messages differ from those encoded without the cache", tc.name)
		}
		rows, typ := decoded(t, tc.got)
		if !equal(rows, wantRankings) {
			t.Errorf("%s: rows=%q, want %q", tc.name, rows, wantRankings)
		}
		if got, want := typ, "VARCHAR"; got != want {
			t.Errorf("%s: column metadata TYPE_NAME=%q, want %q", tc.name, got, want)
		}
	}

	// The Flight SQL way: the ticket of GetFlightInfo gets the same messages.
	var md metadata.MD
	info, err := c.Execute(ctx, q, grpc.Header(&md))
	if err != nil {
		t.Fatal(err)
	}
	viaSQL := rawDoGet(t, ctx, c, info.GetEndpoint()[0].GetTicket().GetTicket())
	if !sameBytes(viaSQL.msgs, hit.msgs) {
		t.Error("Flight SQL statement ticket: messages differ from plain Flight's")
	}
	if got, want := viaSQL.cache, "HIT"; got != want {
		t.Errorf("Flight SQL statement ticket: cache=%s, want %s", got, want)
	}

	// Concurrent hits send the one kept encoding side by side.
	var wg sync.WaitGroup
	same := make(chan bool, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := c.Client.DoGet(ctx, &flight.Ticket{Ticket: []byte(q)})
			if err != nil {
				same <- false
				return
			}
			var got [][]byte
			for {
				fd, err := s.Recv()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					same <- false
					return
				}
				b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(fd)
				got = append(got, b)
			}
			same <- sameBytes(got, hit.msgs)
		}()
	}
	wg.Wait()
	close(same)
	for ok := range same {
		if !ok {
			t.Error("a concurrent hit failed or differs")
		}
	}

	r.changeOrders(t, 200)
	changed := rawDoGet(t, ctx, c, []byte(q))
	changedHit := rawDoGet(t, ctx, c, []byte(q))
	if sameBytes(changed.msgs, hit.msgs) {
		t.Fatal("after a change: the old encoding was sent")
	}
	if !sameBytes(changedHit.msgs, changed.msgs) {
		t.Error("after a change: the hit differs from the miss")
	}
	if got, want := changedHit.pos, position.LSN(200); got != want {
		t.Errorf("after a change: position=%s, want %s", got, want)
	}
	if rows, _ := decoded(t, changedHit); !equal(rows, wantChangedRankings) {
		t.Errorf("after a change: rows=%q, want %q", rows, wantChangedRankings)
	}
}
