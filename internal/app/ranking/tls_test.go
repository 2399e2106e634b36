package ranking_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/testcert"
)

// MustServeTLS starts rt on localhost:0 serving TLS with cfg.
func MustServeTLS(tb testing.TB, rt *runtime, cfg *tls.Config) string {
	tb.Helper()
	srv := flight.NewServerWithMiddleware(nil, grpc.Creds(credentials.NewTLS(cfg)))
	register(srv, rt)
	if err := srv.Init("localhost:0"); err != nil {
		tb.Fatal(err)
	}
	go func() { _ = srv.Serve() }()
	tb.Cleanup(srv.Shutdown)
	return srv.Addr().String()
}

// MustOpenTLS is MustOpenQuery over TLS with cfg (nil: plaintext).
func MustOpenTLS(tb testing.TB, addr, protocol string, cfg *tls.Config) *ranking.Flight {
	tb.Helper()
	f := ranking.NewFlight("accelerated runtime", addr, ranking.AcceleratedQuery)
	f.Protocol = protocol
	f.TLS = cfg
	if err := f.Open(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = f.Close() })
	return f
}

func TestFlight_TLS(t *testing.T) {
	cert := testcert.New(t)
	for _, protocol := range protocols {
		t.Run(protocol, func(t *testing.T) {
			rt := newRuntime(t, arrow.PrimitiveTypes.Int64, `[{"name":"a","count":2},{"name":"b","count":1}]`)
			addr := MustServeTLS(t, rt, cert.ServerConfig(t))
			f := MustOpenTLS(t, addr, protocol, cert.ClientConfig())
			res, err := f.Ranking(context.Background(), ranking.Request{})
			if err != nil {
				t.Fatal(err)
			}
			if want := []ranking.Row{{Name: "a", Count: 2}, {Name: "b", Count: 1}}; !equalRows(res.Rows, want) {
				t.Fatalf("rows=%v, want %v", res.Rows, want)
			}
		})
	}
}

// TestFlight_TLS_Mismatch: every way client and server can disagree about TLS
// is ErrUnavailable with an error that says to check TLS.
func TestFlight_TLS_Mismatch(t *testing.T) {
	cert, other := testcert.New(t), testcert.New(t)
	rows := `[{"name":"a","count":1}]`
	for _, tt := range []struct {
		name     string
		server   *tls.Config // nil: plaintext
		client   *tls.Config
		contains string
	}{
		{"wrong CA", cert.ServerConfig(t), other.ClientConfig(), "the TLS handshake failed: check"},
		{"plaintext server", nil, cert.ClientConfig(), "the TLS handshake failed: check"},
		{"plaintext client", cert.ServerConfig(t), nil, "whether it serves TLS"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t, arrow.PrimitiveTypes.Int64, rows)
			var addr string
			if tt.server != nil {
				addr = MustServeTLS(t, rt, tt.server)
			} else {
				addr = MustServe(t, rt)
			}
			f := MustOpenTLS(t, addr, "", tt.client)
			_, err := f.Ranking(context.Background(), ranking.Request{})
			if !errors.Is(err, ranking.ErrUnavailable) {
				t.Fatalf("err=%v, want ErrUnavailable", err)
			}
			t.Logf("err: %v", err)
			if !strings.Contains(err.Error(), tt.contains) {
				t.Fatalf("err=%q, want it to contain %q", err, tt.contains)
			}
		})
	}
}
