// Package pgdial bounds the network part of a Postgres connection attempt.
//
// A connection attempt's name lookup and TCP handshake take a millisecond or
// two against a live server. Against a server that has gone (a stopped
// container, a host that is down), the SYN goes unanswered and the kernel sends
// it again 1, 3 and 7 s later: without a bound of its own the attempt waits for
// the whole connect timeout, and it goes on waiting after the server is back. A
// pool's connection attempts hold the pool's slots, so requests queue behind
// them and fail seconds after the outage has ended. With the lookup and the
// handshake bounded to 2 s (enough for a SYN lost on the way to be sent once
// more), such an attempt ends within about a second of the server's return,
// and the next one reaches it. TLS and authentication, which need the server's
// CPU, stay under the connect timeout.
package pgdial

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultTimeout bounds a name lookup and a TCP handshake.
const DefaultTimeout = 2 * time.Second

// Bound makes every connection attempt of cc give up its name lookup after
// timeout, and its TCP handshake after timeout, with an error that says which
// step had no answer. timeout <= 0 means DefaultTimeout. It replaces cc's
// LookupFunc (keeping the one it wraps) and DialFunc.
func Bound(cc *pgconn.Config, timeout time.Duration) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	lookup := cc.LookupFunc
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	cc.LookupFunc = func(ctx context.Context, host string) ([]string, error) {
		lctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		addrs, err := lookup(lctx, host)
		if err != nil && ctx.Err() == nil && lctx.Err() != nil {
			return nil, fmt.Errorf("look up %s: no answer within %s: %w", host, timeout, err)
		}
		return addrs, err
	}
	d := &net.Dialer{Timeout: timeout}
	cc.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil && ctx.Err() == nil && isTimeout(err) {
			return nil, fmt.Errorf("no answer from %s within %s (is the server up?): %w", addr, timeout, err)
		}
		return c, err
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
