package flightsrv_test

import (
	"context"
	"net"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
)

// TestAddrBeforeOpen: Addr is empty until Open binds, then the bound address.
func TestAddrBeforeOpen(t *testing.T) {
	// An engine with no datasets and no store: Open only needs its change signal.
	srv := flightsrv.New("127.0.0.1:0", engine.New(nil))
	if got := srv.Addr(); got != "" {
		t.Fatalf("Addr before Open=%q, want empty", got)
	}
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	_, port, err := net.SplitHostPort(srv.Addr())
	if err != nil || port == "0" {
		t.Fatalf("Addr after Open=%q (%v), want the bound host:port", srv.Addr(), err)
	}
}
