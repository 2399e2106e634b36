package bench_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// TestRunHeavy drives the scenario against fakes at the HTTP edge: an api whose
// ranking fails while heavy queries run, and a runtime that holds each heavy
// query until the run ends. The report must show the idle phase clean, the
// loaded one failing, the key sent, and the heavy queries counted.
func TestRunHeavy(t *testing.T) {
	var running, badKey atomic.Int64
	var mu sync.Mutex
	seen := map[string]int{}
	runtime := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "k" {
			badKey.Add(1)
		}
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), "CROSS JOIN") || strings.Contains(string(body), "%d") {
			t.Errorf("heavy query %q", body)
		}
		mu.Lock()
		seen[string(body)]++
		mu.Unlock()
		running.Add(1)
		defer running.Add(-1)
		<-r.Context().Done()
	}))
	defer runtime.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("read without Cache-Control: no-cache")
		}
		if running.Load() > 0 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer api.Close()

	cfg := bench.HeavyConfig{Paths: []string{"/ranking-accelerated"}, Concurrency: 2, Duration: 100 * time.Millisecond, Heavy: 3, Settle: 100 * time.Millisecond}
	res := bench.RunHeavy(context.Background(), bench.NewClient(api.URL, 2, 0), bench.NewClient(runtime.URL, 3, time.Minute),
		http.Header{"X-Api-Key": {"k"}}, cfg)

	idle, loaded := res.Idle["/ranking-accelerated"], res.Loaded["/ranking-accelerated"]
	if idle.Requests == 0 || idle.Non2xx() != 0 {
		t.Errorf("idle: %d reads, %d non-2xx; want some, none failed", idle.Requests, idle.Non2xx())
	}
	if loaded.Requests == 0 || loaded.Non2xx() != loaded.Requests {
		t.Errorf("loaded: %d reads, %d non-2xx; want all failed", loaded.Requests, loaded.Non2xx())
	}
	if res.HeavyStarted < 3 || badKey.Load() != 0 {
		t.Errorf("heavy started %d (want >= 3), sent without the key %d", res.HeavyStarted, badKey.Load())
	}
	for q, n := range seen {
		if n > 1 {
			t.Errorf("heavy query %q sent %d times; each must be distinct", q, n)
		}
	}
	md := bench.HeavyMarkdown(res)
	for _, want := range []string{"| /ranking-accelerated | idle |", "| /ranking-accelerated | heavy |", "Heavy queries sent: "} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
