package chaos

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
	zlog "github.com/rs/zerolog/log"
)

// Proxy is a TCP proxy (toxiproxy, in-process) whose link can be made slow:
// every chunk it forwards, in either direction, waits a latency and as long
// as a bandwidth cap needs. It stands between two hops of the stack for the
// slow-link fault.
type Proxy struct {
	Target string // address to forward to

	p        *toxiproxy.Proxy
	accepted atomic.Int64
}

// OpenProxy listens on listen ("0.0.0.0:0" for any free port) and forwards
// to target.
func OpenProxy(listen, target string) (*Proxy, error) {
	// The toxics log to zerolog's global logger, at trace level: silence it.
	zlog.Logger = zerolog.Nop()
	pr := &Proxy{Target: target}
	log := zerolog.New(io.Discard).Hook(zerolog.HookFunc(func(_ *zerolog.Event, _ zerolog.Level, msg string) {
		if msg == "Accepted client" {
			pr.accepted.Add(1)
		}
	}))
	pr.p = toxiproxy.NewProxy(toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), log), "chaos-"+target, listen, target)
	if err := pr.p.Start(); err != nil {
		return nil, fmt.Errorf("open proxy to %s: %w", target, err)
	}
	return pr, nil
}

// Port is the port the proxy listens on.
func (p *Proxy) Port() int {
	var port int
	fmt.Sscan(p.p.Listen[strings.LastIndex(p.p.Listen, ":")+1:], &port)
	return port
}

// SetLink sets the added latency per chunk and the bandwidth cap (bytes per
// second), both directions; zero values restore a plain link.
func (p *Proxy) SetLink(latency time.Duration, bytesPerSecond int64) error {
	p.p.Toxics.ResetToxics(context.Background())
	if latency == 0 && bytesPerSecond == 0 {
		return nil
	}
	for _, stream := range []string{"upstream", "downstream"} {
		for _, t := range []string{
			fmt.Sprintf(`{"name":"latency-%s","type":"latency","stream":%q,"attributes":{"latency":%d}}`, stream, stream, latency.Milliseconds()),
			fmt.Sprintf(`{"name":"bandwidth-%s","type":"bandwidth","stream":%q,"attributes":{"rate":%d}}`, stream, stream, max(bytesPerSecond/1000, 1)),
		} {
			if _, err := p.p.Toxics.AddToxicJson(strings.NewReader(t)); err != nil {
				return fmt.Errorf("slow the link to %s: %w", p.Target, err)
			}
		}
	}
	return nil
}

// Accepted is how many connections the proxy accepted so far.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Close stops the proxy and cuts every connection.
func (p *Proxy) Close() { p.p.Stop() }
