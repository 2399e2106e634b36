package pgdial

import (
	"context"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// silentAddr returns the address of a TCP listener whose accept queue is
// full, so the kernel drops further SYNs: a connect to it gets no answer, as
// one to a host that has gone.
func silentAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}).String()
	// Fill the queue (backlog 0 holds one connection) until a connect hangs.
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return addr
		}
		t.Cleanup(func() { c.Close() })
		if i == 16 {
			t.Skip("this kernel answers every SYN; cannot make a silent listener")
		}
	}
}

func TestBound(t *testing.T) {
	silent := silentAddr(t)
	live, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	hangingLookup := func(ctx context.Context, host string) ([]string, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}

	tests := []struct {
		name    string
		addr    string
		lookup  pgconn.LookupFunc
		wantErr string // empty: the dial succeeds (the Postgres startup then fails)
	}{
		{name: "silent server", addr: silent, wantErr: "no answer from " + silent + " within 200ms"},
		{name: "hanging lookup", addr: silent, lookup: hangingLookup, wantErr: "no answer within 200ms"},
		{name: "live listener", addr: live.Addr().String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cc, err := pgconn.ParseConfig("postgres://u:p@" + tt.addr + "/db?sslmode=disable")
			if err != nil {
				t.Fatal(err)
			}
			cc.ConnectTimeout = 0 // only Bound's limit and the test's context
			if tt.lookup != nil {
				cc.Host = "postgres.internal"
				cc.LookupFunc = tt.lookup
			}
			Bound(cc, 200*time.Millisecond)

			var dialErr error
			dial := cc.DialFunc
			cc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := dial(ctx, network, addr)
				dialErr = err
				if c != nil {
					c.Close() // the live listener never speaks Postgres
				}
				return c, err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err = pgconn.ConnectConfig(ctx, cc)
			if err == nil {
				t.Fatal("connected to a server that speaks no Postgres")
			}
			if ctx.Err() != nil {
				t.Fatalf("the connect ran until the test's own deadline: %v", err)
			}
			if tt.wantErr == "" {
				if dialErr != nil {
					t.Fatalf("dial of a live listener failed: %v", dialErr)
				}
				return
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}
