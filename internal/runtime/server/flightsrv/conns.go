package flightsrv

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the limits on connections and streams (see Server).
const (
	// DefaultPreAuthBytes is how much the server reads from a connection
	// before any call on it has presented a valid key: the HTTP/2 preface,
	// settings, headers and a TLS handshake need a few KiB; a refused call
	// may have sent a flow-control window (64 KiB) of its message before its
	// refusal reaches the client.
	DefaultPreAuthBytes = 256 << 10
	// DefaultPreAuthRate is how many bytes a second such a connection earns
	// back, so that a keyless health watcher's pings and checks go on.
	DefaultPreAuthRate = 1 << 10
	// DefaultMaxStreams bounds the calls one connection runs at once; a
	// client queues the ones beyond it.
	DefaultMaxStreams = 256
	// DefaultIdleTimeout closes a connection that has had no call for this
	// long; clients reconnect on their next call.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultConnectTimeout bounds a new connection's TLS handshake and
	// HTTP/2 preface.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultMaxHeaderBytes bounds the headers (metadata) of one call, which
	// are read before its credentials can be checked.
	DefaultMaxHeaderBytes = 64 << 10
)

// errPreAuthBudget ends a connection that sent more than its budget before
// authenticating.
var errPreAuthBudget = errors.New("connection closed: it sent more than the server reads before a call presents a valid API key")

// connGuard tracks the server's connections and bounds what it reads from
// those on which no call has authenticated yet.
type connGuard struct {
	burst, rate float64 // bytes, bytes per second
	open        bool    // no keys: every connection is trusted from the start

	mu    sync.Mutex
	conns map[string]*guardedConn // by remote address

	cut atomic.Uint64 // connections closed for their budget
}

func newConnGuard(burst, rate int, open bool) *connGuard {
	return &connGuard{burst: float64(burst), rate: float64(rate), open: open, conns: map[string]*guardedConn{}}
}

// listener wraps a listener's connections in the guard.
type guardListener struct {
	net.Listener
	g *connGuard
}

func (l guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	gc := &guardedConn{Conn: c, g: l.g, key: c.RemoteAddr().String(), tokens: l.g.burst, at: time.Now()}
	gc.trusted.Store(l.g.open)
	l.g.mu.Lock()
	l.g.conns[gc.key] = gc
	l.g.mu.Unlock()
	return gc, nil
}

// trust lifts the budget of the connection from addr: a call on it presented
// a valid key.
func (g *connGuard) trust(addr string) {
	g.mu.Lock()
	c := g.conns[addr]
	g.mu.Unlock()
	if c != nil {
		c.trusted.Store(true)
	}
}

// count returns the open connections and how many of them are trusted.
func (g *connGuard) count() (open, trusted int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.conns {
		if c.trusted.Load() {
			trusted++
		}
	}
	return len(g.conns), trusted
}

// guardedConn counts what an untrusted connection sends.
type guardedConn struct {
	net.Conn
	g       *connGuard
	key     string
	trusted atomic.Bool

	mu     sync.Mutex
	tokens float64
	at     time.Time
	closed bool
}

func (c *guardedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.trusted.Load() && !c.spend(n) {
		c.g.cut.Add(1)
		c.Close()
		return 0, errPreAuthBudget
	}
	return n, err
}

// spend takes n bytes from the budget and reports whether it held them.
func (c *guardedConn) spend(n int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	c.tokens = min(c.g.burst, c.tokens+now.Sub(c.at).Seconds()*c.g.rate)
	c.at = now
	c.tokens -= float64(n)
	return c.tokens >= 0
}

func (c *guardedConn) Close() error {
	c.mu.Lock()
	closed := c.closed
	c.closed = true
	c.mu.Unlock()
	if !closed {
		c.g.mu.Lock()
		if c.g.conns[c.key] == c {
			delete(c.g.conns, c.key)
		}
		c.g.mu.Unlock()
	}
	return c.Conn.Close()
}
