//go:build duckdb_arrow

package flightsrv_test

import (
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
)

// TestHealth: NOT_SERVING until Ready holds, SERVING then, NOT_SERVING for good
// after Drain; Close ends a Watch instead of waiting for it.
func TestHealth(t *testing.T) {
	var ready atomic.Bool
	r := newRecipe(t, nil, func(s *flightsrv.Server) { s.Ready = ready.Load })
	conn, err := grpc.NewClient(r.srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	hc := healthpb.NewHealthClient(conn)
	ctx := testContext(t)

	w, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	next := func() healthpb.HealthCheckResponse_ServingStatus {
		t.Helper()
		resp, err := w.Recv()
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		return resp.GetStatus()
	}
	if got, want := next(), healthpb.HealthCheckResponse_NOT_SERVING; got != want {
		t.Fatalf("before ready: status=%s, want %s", got, want)
	}
	ready.Store(true)
	if got, want := next(), healthpb.HealthCheckResponse_SERVING; got != want {
		t.Fatalf("ready: status=%s, want %s", got, want)
	}
	resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: "arrow.flight.protocol.FlightService"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := resp.GetStatus(), healthpb.HealthCheckResponse_SERVING; got != want {
		t.Fatalf("flight service: status=%s, want %s", got, want)
	}

	r.srv.Drain()
	if got, want := next(), healthpb.HealthCheckResponse_NOT_SERVING; got != want {
		t.Fatalf("draining: status=%s, want %s", got, want)
	}
	// Queries still run while draining.
	c := newClient(t, r.srv)
	info, err := c.Execute(ctx, "SELECT name, count FROM rankings")
	if err != nil {
		t.Fatalf("query while draining: %v", err)
	}
	if got, _, _ := doGet(t, c, info); len(got) != 3 {
		t.Fatalf("query while draining: rows=%v, want 3", got)
	}

	runtimetest.StopServer(t, r.srv) // fails the test if the open Watch holds it up
	if _, err := w.Recv(); err == nil {
		t.Fatal("watch goes on after Close")
	}
}

// TestHealthNeedsNoKey: with API keys on, health checks (Check and Watch) answer
// without credentials, as /health does on HTTP; a query without them does not.
func TestHealthNeedsNoKey(t *testing.T) {
	r := newRecipe(t, nil, withKeys(testKey))
	conn, err := grpc.NewClient(r.srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	hc := healthpb.NewHealthClient(conn)
	ctx := testContext(t)
	resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatalf("check without a key: %v", err)
	}
	if got, want := resp.GetStatus(), healthpb.HealthCheckResponse_SERVING; got != want {
		t.Fatalf("status=%s, want %s", got, want)
	}
	w, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatalf("watch without a key: %v", err)
	}
	if _, err := queryRankings(ctx, newPlainClient(t, r.srv)); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("query without a key: %v, want Unauthenticated", err)
	}
}
