package api_test

import (
	"context"
	"strings"
	"testing"
)

// TestAddrBeforeOpen: ListenAddr, Port and URL are zero until Open binds.
func TestAddrBeforeOpen(t *testing.T) {
	srv := newFixture(t).server
	srv.Addr = "127.0.0.1:0"
	if a, p, u := srv.ListenAddr(), srv.Port(), srv.URL(); a != nil || p != 0 || u != "" {
		t.Fatalf("before Open: ListenAddr=%v Port=%d URL=%q, want nil, 0, empty", a, p, u)
	}
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	if srv.ListenAddr() == nil || srv.Port() == 0 || !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Fatalf("after Open: ListenAddr=%v Port=%d URL=%q, want the bound address", srv.ListenAddr(), srv.Port(), srv.URL())
	}
}
