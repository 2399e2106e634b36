package chaos_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/chaos"
)

// echo serves one line back per line on a loopback port.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

func TestProxyForwardsAndSlows(t *testing.T) {
	p, err := chaos.OpenProxy("127.0.0.1:0", echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.Port()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	roundTrip := func() time.Duration {
		began := time.Now()
		if _, err := c.Write([]byte("ping\n")); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil || line != "ping\n" {
			t.Fatalf("echo = %q, %v", line, err)
		}
		return time.Since(began)
	}
	roundTrip()
	if err := p.SetLink(100*time.Millisecond, 0); err != nil {
		t.Fatal(err)
	}
	// Two chunks each way wait at least 100 ms: a lower bound, not a timing.
	if d := roundTrip(); d < 200*time.Millisecond {
		t.Fatalf("round trip through the slow link took %s, want at least 200ms", d)
	}
	if err := p.SetLink(0, 0); err != nil {
		t.Fatal(err)
	}
	roundTrip()
	if got, want := p.Accepted(), int64(1); got != want {
		t.Fatalf("accepted %d connections, want %d", got, want)
	}
}
