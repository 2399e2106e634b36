//go:build duckdb_arrow

package flightsrv_test

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"

	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

func TestWatch(t *testing.T) {
	r := newRecipe(t, nil, nil)
	c := newPlainClient(t, r.srv)
	ctx := testContext(t)

	actions, err := c.ListActions(ctx, &flight.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for {
		a, err := actions.Recv()
		if err != nil {
			break
		}
		types = append(types, a.Type)
	}
	if !slices.Contains(types, wire.ActionWatch) || !slices.Contains(types, "CreatePreparedStatement") {
		t.Errorf("actions=%q, want %s and the Flight SQL ones", types, wire.ActionWatch)
	}

	body := wire.WatchRequest{Table: "rankings"}.Encode()
	stream, err := c.DoAction(ctx, &flight.Action{Type: wire.ActionWatch, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	next := func() string {
		t.Helper()
		res, err := stream.Recv()
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		n, err := wire.DecodeWatchNotice(res.Body)
		if err != nil {
			t.Fatalf("notice %q: %v", res.Body, err)
		}
		return n.Position.String()
	}
	if got, want := next(), "0/64"; got != want {
		t.Errorf("first notice position=%s, want %s", got, want)
	}
	r.changeOrders(t, 200)
	if got, want := next(), "0/C8"; got != want {
		t.Errorf("notice after a change: position=%s, want %s", got, want)
	}

	// The server closes while the stream is open: Close is not held up by it.
	runtimetest.StopServer(t, r.srv)
	for err == nil {
		_, err = stream.Recv()
	}
	wantCode(t, err, codes.Unavailable)

	// An unknown table is refused.
	r2 := newRecipe(t, nil, nil)
	c2 := newPlainClient(t, r2.srv)
	stream, err = c2.DoAction(ctx, &flight.Action{Type: wire.ActionWatch, Body: []byte(`{"table":"nope"}`)})
	if err == nil {
		_, err = stream.Recv()
	}
	wantCode(t, err, codes.NotFound, "nope")
}
