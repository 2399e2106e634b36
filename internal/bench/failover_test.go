package bench_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// fakeReplicas is the api at the HTTP edge: writes are at 0/20; reads answer at
// 0/10, or at least at the minimum asked for when honest.
func fakeReplicas(honest bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.Header().Set(wire.HeaderPosition, "0/20")
			w.WriteHeader(http.StatusCreated)
			return
		}
		pos := position.LSN(0x10)
		if m, err := position.Parse(r.Header.Get(wire.HeaderMinPosition)); err == nil && honest && m > pos {
			pos = m
		}
		w.Header().Set(wire.HeaderPosition, pos.String())
		_, _ = w.Write([]byte("ranking"))
	})
}

func TestRunFailover(t *testing.T) {
	for _, tc := range []struct {
		name       string
		honest     bool
		violations bool
	}{
		{"answers at the minimum", true, false},
		{"answers older than a write", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(fakeReplicas(tc.honest))
			defer srv.Close()
			c := bench.NewClient(srv.URL, 4, 0)
			defer c.Close()
			ran := false
			cfg := bench.FailoverConfig{Path: "/ranking-materialized", Concurrency: 4, Duration: 300 * time.Millisecond, WriteRate: 50,
				Events: []bench.FailoverEvent{{Name: "kill", At: 50 * time.Millisecond, Do: func(context.Context) (string, error) {
					ran = true
					return "killed one", nil
				}}}}
			res := bench.RunFailover(context.Background(), c, cfg)
			if !ran || len(res.Events) != 1 || res.Events[0].Detail != "killed one" {
				t.Fatalf("events=%+v, want the kill reported", res.Events)
			}
			if res.All.Requests == 0 || res.All.Non2xx() != 0 || res.Writes.OK == 0 {
				t.Fatalf("reads=%d non-2xx=%d writes=%d; want reads and writes, all 2xx", res.All.Requests, res.All.Non2xx(), res.Writes.OK)
			}
			if got := res.Violations > 0; got != tc.violations {
				t.Fatalf("violations=%d, want some: %v", res.Violations, tc.violations)
			}
			if md := bench.FailoverMarkdown(res); !strings.Contains(md, "| kill (+50ms, next 5s) |") {
				t.Fatalf("markdown lacks the event's row:\n%s", md)
			}
		})
	}
}
