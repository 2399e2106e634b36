//go:build duckdb_arrow

package flightsrv_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
)

// countingConn counts what a client writes to the server.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// dialCounting opens a gRPC connection to srv whose written bytes land in n.
func dialCounting(t *testing.T, srv *flightsrv.Server, n *atomic.Int64) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			return countingConn{Conn: c, n: n}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// A keyless call is refused from its headers: the 8 MiB command it sends
// after them is not read (the client gets to send about one flow-control
// window of it).
func TestKeylessCallPayloadIsNotRead(t *testing.T) {
	r := newRecipe(t, nil, withKeys(testKey))
	var sent atomic.Int64
	c := flight.NewClientFromConn(dialCounting(t, r.srv, &sent), nil)
	ctx := testContext(t)
	big := "SELECT 1 -- " + strings.Repeat("x", 8<<20)
	for _, md := range []metadata.MD{nil, metadata.Pairs("x-api-key", "not-a-key")} {
		_, err := c.GetFlightInfo(metadata.NewOutgoingContext(ctx, md), &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(big)})
		wantCode(t, err, codes.Unauthenticated)
	}
	if got, limit := sent.Load(), int64(1<<20); got > limit {
		t.Fatalf("the client sent %d bytes for two refused 8 MiB calls, want at most %d: the server read the payloads", got, limit)
	}
}

// A connection on which no call has presented a key is closed once it has
// sent more than PreAuthBytes: a keyless health check with a 2 MiB body is
// not read whole. A small keyless health check still answers, and a
// connection that authenticated sends what it likes.
func TestKeylessConnectionIsCutPastItsBudget(t *testing.T) {
	r := newRecipe(t, nil, withKeys(testKey))
	ctx := testContext(t)

	hc := healthpb.NewHealthClient(dialCounting(t, r.srv, new(atomic.Int64)))
	_, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: strings.Repeat("x", 2<<20)})
	if err == nil || status.Code(err) == codes.NotFound {
		t.Fatalf("health check with a 2 MiB body: %v; want the connection closed before the body is read", err)
	}
	if _, _, cut := r.srv.Conns(); cut != 1 {
		t.Errorf("connections cut for their budget: %d, want 1", cut)
	}

	resp, err := healthpb.NewHealthClient(dialCounting(t, r.srv, new(atomic.Int64))).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("small keyless health check: %v %v, want SERVING", resp, err)
	}

	c := flight.NewClientFromConn(dialCounting(t, r.srv, new(atomic.Int64)), nil)
	authed := metadata.AppendToOutgoingContext(ctx, "x-api-key", testKey)
	big := "SELECT 1 AS one -- " + strings.Repeat("x", 900<<10)
	if _, err := c.GetFlightInfo(authed, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(big)}); err != nil {
		t.Fatalf("a 900 KiB query with the key: %v", err)
	}
}

// dialHTTP2 opens a raw HTTP/2 connection to srv, sends the preface and empty
// settings, and returns the framer.
func dialHTTP2(t *testing.T, srv *flightsrv.Server) (net.Conn, *http2.Framer) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(runtimetest.Timeout))
	return conn, fr
}

// The server tells every client how many calls one connection may run at
// once (SETTINGS_MAX_CONCURRENT_STREAMS).
func TestStreamsPerConnectionAreBounded(t *testing.T) {
	r := newRecipe(t, nil, func(s *flightsrv.Server) { s.MaxStreams = 7 })
	_, fr := dialHTTP2(t, r.srv)
	f, err := fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	settings, ok := f.(*http2.SettingsFrame)
	if !ok {
		t.Fatalf("first frame %T, want the server's settings", f)
	}
	if v, ok := settings.Value(http2.SettingMaxConcurrentStreams); !ok || v != 7 {
		t.Fatalf("SETTINGS_MAX_CONCURRENT_STREAMS=%d (sent: %v), want 7", v, ok)
	}
}

// A connection that never completes its HTTP/2 preface, and one that runs no
// call, are closed: the server keeps no idle connections.
func TestIdleConnectionsAreClosed(t *testing.T) {
	r := newRecipe(t, nil, func(s *flightsrv.Server) {
		s.ConnectTimeout = 200 * time.Millisecond
		s.IdleTimeout = 300 * time.Millisecond
	})

	silent, err := net.Dial("tcp", r.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	silent.SetReadDeadline(time.Now().Add(runtimetest.Timeout))
	if _, err := io.Copy(io.Discard, silent); isTimeout(err) {
		t.Fatal("a connection that sent nothing is still open, want it closed")
	}

	_, fr := dialHTTP2(t, r.srv)
	goAway := false
	for {
		f, err := fr.ReadFrame()
		if isTimeout(err) {
			t.Fatal("a connection without calls is still open, want it closed")
		}
		if err != nil {
			break // closed
		}
		switch f := f.(type) {
		case *http2.GoAwayFrame:
			goAway = true
		case *http2.PingFrame:
			if !f.IsAck() { // the server confirms its GOAWAY with a ping
				fr.WritePing(true, f.Data)
			}
		}
	}
	if !goAway {
		t.Error("the idle connection was closed without GOAWAY")
	}
	runtimetest.WaitFor(t, r.engine, "the server to hold no connection", func() bool {
		open, _, _ := r.srv.Conns()
		return open == 0
	})
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// lines collects a logger's lines.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lines) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), substr)
}

// Wrong keys from one address are refused before they are checked once the
// address has spent its budget, the right key too, and logged once.
func TestWrongKeysAreThrottledAndLoggedOnce(t *testing.T) {
	var log lines
	r := newRecipe(t, nil, func(s *flightsrv.Server) {
		s.APIKeys = apikey.ReadOnlyKeys(testKey)
		s.Throttle = &apikey.Throttle{Burst: 10, Refill: time.Hour, LogInterval: time.Hour,
			Logger: slog.New(slog.NewTextHandler(&log, nil))}
	})
	c := newPlainClient(t, r.srv)
	ctx := testContext(t)
	desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(rankingsSQL)}
	codesSeen := map[codes.Code]int{}
	for i := 0; i < 30; i++ {
		_, err := c.GetFlightInfo(metadata.AppendToOutgoingContext(ctx, "x-api-key", "guess"), desc)
		codesSeen[status.Code(err)]++
	}
	if codesSeen[codes.Unauthenticated] != 10 || codesSeen[codes.ResourceExhausted] != 20 {
		t.Fatalf("answers to 30 wrong keys: %v, want 10 Unauthenticated then 20 ResourceExhausted", codesSeen)
	}
	_, err := c.GetFlightInfo(metadata.AppendToOutgoingContext(ctx, "x-api-key", testKey), desc)
	wantCode(t, err, codes.ResourceExhausted, "try again in")
	_, err = c.GetFlightInfo(ctx, desc)
	wantCode(t, err, codes.Unauthenticated, "requires an API key")
	if got := log.count("wrong API keys"); got != 1 {
		t.Fatalf("%d log lines about wrong keys, want 1:\n%s", got, log.buf.String())
	}
}
