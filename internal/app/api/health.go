package api

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/cqrs-spice/cqrs/internal/wire"
)

var okBody = []byte("ok\n")

// handleOK answers 200 "ok" without I/O: the liveness probe, and the no-op
// endpoint that measures what this api costs by itself.
func handleOK(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write(okBody)
}

type dependency struct {
	Status string `json:"status"` // "ok" or "unavailable"
	Error  string `json:"error,omitempty"`
}

type readiness struct {
	Status       string                `json:"status"` // "ready" or "unavailable"
	Dependencies map[string]dependency `json:"dependencies"`
}

// summary lists the dependencies that failed, for the log.
func (r readiness) summary() string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(r.Dependencies)) {
		if d := r.Dependencies[name]; d.Error != "" {
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			b.WriteString(name + ": " + d.Error)
		}
	}
	return b.String()
}

// handleReady probes every check at once, each bounded by ReadyTimeout, and
// answers 200 when all answer, else 503, with the state of each.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	timeout := s.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	res := readiness{Status: "ready", Dependencies: make(map[string]dependency, len(s.Checks))}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range s.Checks {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(r.Context(), timeout)
			defer cancel()
			d := dependency{Status: "ok"}
			if err := c.Ping(ctx); err != nil {
				d = dependency{Status: "unavailable", Error: err.Error()}
			}
			mu.Lock()
			defer mu.Unlock()
			res.Dependencies[c.Name] = d
			if d.Error != "" {
				res.Status = "unavailable"
			}
		})
	}
	wg.Wait()
	status := http.StatusOK
	if res.Status != "ready" {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
		noteError(r, errors.New(res.summary()))
	}
	w.Header().Set(wire.HeaderCacheControl, "no-store")
	writeJSON(w, status, res)
}
