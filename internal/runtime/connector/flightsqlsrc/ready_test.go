//go:build duckdb_arrow

package flightsqlsrc_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/flightsqlsrc"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

// TestSubscribeWaitsForTheUpstream: opening a subscription while the upstream
// is unreachable waits for the connection, bounded by ReadyWait, instead of
// failing at once; so it starts as soon as the upstream is back, and says so
// when it is not back in time.
func TestSubscribeWaitsForTheUpstream(t *testing.T) {
	a := newUpstream(t)
	addr := a.srv.Addr()
	src := newSource(t, map[string]string{"flightsql_endpoint": "http://" + addr}, "rankings")
	runtimetest.StopServer(t, a.srv)
	defer func(w time.Duration) { flightsqlsrc.ReadyWait = w }(flightsqlsrc.ReadyWait)
	ctx := context.Background()

	t.Run("not back in time", func(t *testing.T) {
		flightsqlsrc.ReadyWait = 300 * time.Millisecond
		st, err := src.Subscribe(ctx, 0)
		if err == nil {
			st.Close()
			t.Fatal("subscribed to a stopped upstream")
		}
		for _, want := range []string{"is unavailable", "no connection to the upstream within 300ms", "the dataset keeps its last data"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v, want it to say %q", err, want)
			}
		}
		if n := strings.Count(err.Error(), "no connection to the upstream"); n != 1 {
			t.Errorf("err = %v: says it %d times", err, n)
		}
	})

	t.Run("back while waiting", func(t *testing.T) {
		flightsqlsrc.ReadyWait = time.Minute
		type result struct {
			st  *flightsqlsrc.Stream
			err error
		}
		// The upstream's address refuses every connection it accepts: the call
		// must wait through two failed attempts after it started, which a call
		// that does not wait for the connection would not survive.
		attempts := refuseConnections(t, addr)
		done := make(chan result, 1)
		started := make(chan struct{})
		go func() {
			close(started)
			st, err := src.Subscribe(ctx, 0)
			done <- result{st, err}
		}()
		<-started
		for n := 0; n < 2; {
			select {
			case r := <-done:
				t.Fatalf("subscribe returned while the upstream was away: %v", r.err)
			case <-attempts.accepted:
				n++
			}
		}
		attempts.close()
		a.srv = runtimetest.StartServerAt(t, addr, a.engine, a.mem, nil)
		r := <-done
		if r.err != nil {
			t.Fatalf("subscribe after the upstream came back: %v", r.err)
		}
		defer r.st.Close()
		if r.st.Position == 0 {
			t.Error("the snapshot carries no position")
		}
	})
}

// refused is a listener that closes every connection it accepts.
type refused struct {
	ln       net.Listener
	accepted chan struct{} // one value per connection accepted
	done     chan struct{}
}

// refuseConnections listens on addr and closes each connection at once, as a
// host whose server is not up yet would end a TLS or HTTP/2 handshake.
func refuseConnections(t *testing.T, addr string) *refused {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := &refused{ln: ln, accepted: make(chan struct{}, 1024), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			r.accepted <- struct{}{}
		}
	}()
	t.Cleanup(r.close)
	return r
}

func (r *refused) close() {
	r.ln.Close()
	<-r.done
}
