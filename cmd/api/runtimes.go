package main

import (
	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/app/replicas"
)

// openRuntime opens the pool of a runtime service's replicas: addr's host is
// resolved every second (a compose service name or a Kubernetes headless
// Service resolves to every replica; a single runtime is a pool of one), and each
// replica is read by its own ranking.Flight, configured here, which sends key
// (when set) on every call, over TLS when t says so (the health watch too).
func (m *Main) openRuntime(name, prefix, addr, key string, t FlightTLS, query string) (*replicas.Pool, error) {
	cfg := m.Config
	tlsCfg, err := t.clientConfig(prefix, addr)
	if err != nil {
		return nil, err
	}
	p := replicas.NewPool(name, addr, func(replica string) (replicas.Reader, error) {
		f := ranking.NewFlight(name, replica, query)
		f.Timeout = cfg.RuntimeTimeout
		f.Protocol = cfg.RuntimeProtocol
		f.Coalesce = cfg.RuntimeCoalesce
		f.APIKey = key
		f.TLS = tlsCfg
		return f, f.Open()
	})
	p.TLS = tlsCfg // the health watch dials as the readers do
	p.Logger = m.Logger
	if err := p.Open(); err != nil {
		return nil, err
	}
	return p, nil
}
