package flightsqlsrc

import (
	"context"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// Reconnection policy of the upstream client. After an outage the client must
// be back within a second or two of the upstream answering again:
//
//   - Each connection attempt resolves the name again (gRPC's passthrough
//     resolver hands host:port to the dialer, which looks it up every time).
//     gRPC's dns resolver instead waits at least 30 s between successful
//     resolutions, and after failed ones (a partitioned upstream's name does
//     not resolve) backs off up to 120 s: a restarted or reconnected upstream
//     at a new or returning address stayed unreachable for that long.
//   - Attempts are spaced 100 ms, growing to redialMaxDelay at most, and one
//     attempt gives up after redialConnectTimeout, so an attempt sent into a
//     partition does not hold the next one back for long after it heals.
//   - The name lookup and the TCP handshake together give up after
//     redialDialTimeout. During a partition the lookup's query goes
//     unanswered, and Go's resolver waits 5 s before it asks again: an
//     attempt whose lookup was sent just before the network came back went on
//     waiting for the whole connect timeout. On a live network both take a
//     millisecond.
const (
	redialMaxDelay       = 500 * time.Millisecond
	redialConnectTimeout = 2 * time.Second
	redialDialTimeout    = time.Second
)

// dialTarget is the gRPC target of host:port: resolved on every connection
// attempt.
func dialTarget(hostport string) string { return "passthrough:///" + hostport }

// redialParams are the client's connection backoff settings and its dialer.
func redialParams() []grpc.DialOption {
	d := &net.Dialer{Timeout: redialDialTimeout}
	return []grpc.DialOption{
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: redialMaxDelay},
			MinConnectTimeout: redialConnectTimeout,
		}),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", addr)
		}),
	}
}
