package chaos

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy is a TCP proxy whose link can be made slow: every chunk it forwards,
// in either direction, waits Latency and then as long as the bandwidth cap
// needs. It stands between two hops of the stack for the slow-link fault.
type Proxy struct {
	Listen string // address to listen on, "0.0.0.0:0" for any free port
	Target string // address to forward to

	latency atomic.Int64 // nanoseconds
	rate    atomic.Int64 // bytes per second; 0 for no cap
	bytes   atomic.Int64 // forwarded so far, both directions

	ln     net.Listener
	mu     sync.Mutex
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
	closed atomic.Bool
}

// Open binds the listener and starts accepting.
func (p *Proxy) Open() error {
	ln, err := net.Listen("tcp", p.Listen)
	if err != nil {
		return fmt.Errorf("open proxy to %s: %w", p.Target, err)
	}
	p.ln, p.conns = ln, map[net.Conn]bool{}
	p.wg.Add(1)
	go p.accept()
	return nil
}

// Port is the port the proxy listens on.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// SetLink sets the added latency per chunk and the bandwidth cap (bytes per
// second, 0 for none); zero values restore a plain link.
func (p *Proxy) SetLink(latency time.Duration, bytesPerSecond int64) {
	p.latency.Store(int64(latency))
	p.rate.Store(bytesPerSecond)
}

// Bytes is how many bytes the proxy forwarded (or was forwarding when the
// connection failed), both directions.
func (p *Proxy) Bytes() int64 { return p.bytes.Load() }

// Close stops accepting and cuts every connection.
func (p *Proxy) Close() error {
	p.closed.Store(true)
	err := p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *Proxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	server, err := (&net.Dialer{}).DialContext(ctx, "tcp", p.Target)
	cancel()
	if err != nil {
		client.Close()
		return
	}
	for _, c := range []net.Conn{client, server} {
		p.track(c, true)
		defer p.track(c, false)
		defer c.Close()
	}
	done := make(chan struct{}, 2)
	go func() { p.pump(server, client); done <- struct{}{} }()
	go func() { p.pump(client, server); done <- struct{}{} }()
	<-done // one side ended: close both
}

func (p *Proxy) pump(dst, src net.Conn) {
	buf := make([]byte, 16<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			delay := time.Duration(p.latency.Load())
			if r := p.rate.Load(); r > 0 {
				delay += time.Duration(int64(n) * int64(time.Second) / r)
			}
			if delay > 0 {
				time.Sleep(delay)
			}
			// Counted before the write, so a peer that has received the bytes
			// sees them counted.
			p.bytes.Add(int64(n))
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // EOF or a reset: pass the end on
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			return
		}
	}
}
