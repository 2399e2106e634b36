//go:build duckdb_arrow

package ranking_test

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// partitionProxy forwards TCP to target. Cut freezes every connection open at
// that moment, as a network partition does to a connection whose peer moved
// (bytes neither delivered nor refused), while new connections work: the
// network is back, the old connection is not.
type partitionProxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	gen    int // generation of new connections
	frozen int // connections of this generation or older are frozen
	conns  []net.Conn
}

func startPartitionProxy(t *testing.T, target string) *partitionProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &partitionProxy{ln: ln, target: target, frozen: -1}
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			gen := p.gen
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go p.pump(gen, s, c)
			go p.pump(gen, c, s)
		}
	}()
	return p
}

func (p *partitionProxy) Cut() {
	p.mu.Lock()
	p.frozen, p.gen = p.gen, p.gen+1
	p.mu.Unlock()
}

func (p *partitionProxy) pump(gen int, dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.mu.Lock()
		frozen := gen <= p.frozen
		p.mu.Unlock()
		if err != nil || frozen {
			return // a frozen connection swallows everything from now on
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

// After a partition kills the connection to the runtime without closing it,
// the api must replace it once the network is back. Without keepalive pings
// gRPC would keep sending every call into the dead connection until TCP gives
// up, minutes later.
func TestFlight_RealRuntime_ReplacesConnectionAfterPartition(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for gRPC's keepalive to give up on a frozen connection (about 10 s): make test runs it")
	}
	const pos = position.LSN(0x1_0000_0100)
	addr, _ := recipeRuntime(t, pos, nil)
	proxy := startPartitionProxy(t, addr)
	f := MustOpen(t, proxy.ln.Addr().String())
	f.Timeout = time.Second
	if _, err := f.Ranking(context.Background(), ranking.Request{}); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := f.Ranking(context.Background(), ranking.Request{})
		if err == nil {
			if !equalRows(res.Rows, recipeRows) {
				t.Fatalf("rows=%v, want %v", res.Rows, recipeRows)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing 60 s after the partition, over a working network: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
