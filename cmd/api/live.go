package main

import (
	"net/http"

	"github.com/cqrs-spice/cqrs/internal/app/live"
)

// openLive starts the live page's hub over the three readers the api serves.
func (m *Main) openLive() error {
	m.Live = live.NewHub(
		live.Path{Name: live.PathPostgres, Title: "Postgres", Reader: m.Postgres},
		live.Path{Name: live.PathAccelerated, Title: "Runtime 1 · accelerated", Reader: m.Accelerated, Replicas: m.Accelerated.Replicas},
		live.Path{Name: live.PathMaterialized, Title: "Runtime 2 · materialized", Reader: m.Materialized, Replicas: m.Materialized.Replicas},
	)
	m.Live.Interval = m.Config.LiveInterval
	m.Live.MaxViewers = m.Config.LiveMaxViewers
	m.Live.WriteKey = m.Config.WriteKey != ""
	m.Live.Logger = m.Logger
	return m.Live.Open()
}

// liveHandler is the page's handler, nil without a hub.
func (m *Main) liveHandler() http.Handler {
	if m.Live == nil {
		return nil
	}
	return m.Live.Handler()
}
