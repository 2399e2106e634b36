package chaos

import (
	"context"
	"fmt"
	"time"
)

// Settings of the slow-link fault.
const (
	FaultSlowLink  = "slow-link"
	ModeSlow       = "slow"
	slowLatency    = 200 * time.Millisecond
	slowBandwidth  = 64 << 10 // bytes per second
	slowLinkHold   = 20 * time.Second
	slowLinkPGEnv  = "CHAOS_PG_PROXY_PORT"
	slowLinkFltEnv = "CHAOS_FLIGHT_PROXY_PORT"
)

// SlowLinkFiles are the compose files of the stack whose read-side hops go
// through the chaos tool's proxies, relative to the stack's directory.
var SlowLinkFiles = []string{"docker-compose.yml", "chaos/compose.slow-link.yml"}

func slowFaults() []Fault {
	return []Fault{{
		Name: FaultSlowLink,
		Description: fmt.Sprintf("add %s per chunk and a %d KiB/s cap to both read-side hops "+
			"(accelerated -> Postgres, materialized -> accelerated) for %s", slowLatency, slowBandwidth>>10, slowLinkHold),
		Mode:    ModeSlow,
		Allowed: []string{EndpointAccelerated, EndpointMaterialized},
		Inject:  setLinks(slowLatency, slowBandwidth),
		Hold:    slowLinkHold,
		Heal:    healLinks,
	}}
}

// healLinks restores plain links and checks that the stack used them: a
// slow link nobody crossed proves nothing.
func healLinks(ctx context.Context, e *Env) error {
	if err := setLinks(0, 0)(ctx, e); err != nil {
		return err
	}
	for i, p := range e.Links {
		if p.Accepted() == 0 {
			return fmt.Errorf("no connection crossed proxy %d to %s: the hops do not go through it", i, p.Target)
		}
	}
	return nil
}

func setLinks(latency time.Duration, rate int64) func(context.Context, *Env) error {
	return func(_ context.Context, e *Env) error {
		if len(e.Links) == 0 {
			return fmt.Errorf("no proxies between the hops: the stack was not started with %v", SlowLinkFiles)
		}
		for _, p := range e.Links {
			if err := p.SetLink(latency, rate); err != nil {
				return err
			}
		}
		return nil
	}
}

// openLinks starts the proxies of the slow-link mode on the host: to
// Postgres's and the accelerated runtime's Flight host ports.
func (s *Suite) openLinks() ([]*Proxy, error) {
	targets := []struct{ env, portVar string }{{slowLinkPGEnv, "POSTGRES_PORT"}, {slowLinkFltEnv, "ACCELERATED_FLIGHT_PORT"}}
	var links []*Proxy
	for _, t := range targets {
		p, err := OpenProxy("0.0.0.0:0", fmt.Sprintf("127.0.0.1:%d", s.Ports[t.portVar]))
		if err != nil {
			closeLinks(links)
			return nil, err
		}
		links = append(links, p)
		s.Stack.Env = append(s.Stack.Env, fmt.Sprintf("%s=%d", t.env, p.Port()))
	}
	return links, nil
}

func closeLinks(links []*Proxy) {
	for _, p := range links {
		p.Close()
	}
}
