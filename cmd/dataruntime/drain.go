//go:build duckdb_arrow

package main

import "time"

// DefaultDrain is the --drain default: long enough for a balancer watching gRPC
// health to see NOT_SERVING and move its new calls elsewhere.
const DefaultDrain = 2 * time.Second

// Drain starts a graceful exit: the Flight server's gRPC health turns
// NOT_SERVING for good while every server keeps answering, for d. Close then
// stops taking calls and waits for those in flight. A second signal during the
// wait does not cut it short (the process exits at the end of it).
func (m *Main) Drain(d time.Duration) {
	if m.Flight == nil || d <= 0 {
		return
	}
	m.Flight.Drain()
	m.Logger.Info("draining: health NOT_SERVING, still answering", "for", d)
	time.Sleep(d)
}
