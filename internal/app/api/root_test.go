package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRoot(t *testing.T) {
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Context().Deadline(); ok {
			t.Errorf("%s has the request timeout; the live page's stream must not", r.URL.Path)
		}
		_, _ = w.Write([]byte("live page"))
	})
	for _, tc := range []struct {
		name     string
		live     http.Handler
		accept   string
		code     int
		location string
		body     string
	}{
		{"curl", page, "*/*", 200, "", "POST /orders"},
		{"curl sees the page's address", page, "", 200, "", "GET  /live"},
		{"browser", page, "text/html,application/xhtml+xml,*/*;q=0.8", 303, "/live", ""},
		{"browser without a page", nil, "text/html", 200, "", "GET  /ranking "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.server.Live = tc.live
			w := f.do(t, "GET", "/", "", "Accept", tc.accept)
			if got, want := w.Code, tc.code; got != want {
				t.Fatalf("status=%d, want %d (%s)", got, want, w.Body)
			}
			if got, want := w.Header().Get("Location"), tc.location; got != want {
				t.Fatalf("location=%q, want %q", got, want)
			}
			if !strings.Contains(w.Body.String(), tc.body) {
				t.Fatalf("body %q lacks %q", w.Body, tc.body)
			}
			if tc.live == nil && strings.Contains(w.Body.String(), "/live") {
				t.Fatalf("body %q names /live, which is off", w.Body)
			}
		})
	}
}

func TestLiveIsMountedWithoutTimeout(t *testing.T) {
	f := newFixture(t)
	f.server.RequestTimeout = time.Millisecond
	f.server.Live = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Context().Deadline(); ok || r.Context().Err() == context.DeadlineExceeded {
			t.Errorf("%s has the request timeout", r.URL.Path)
		}
		_, _ = w.Write([]byte(r.URL.Path))
	})
	for _, path := range []string{"/live", "/live/events", "/live/live.js"} {
		if w := f.do(t, "GET", path, ""); w.Code != 200 || w.Body.String() != path {
			t.Fatalf("GET %s: %d %q", path, w.Code, w.Body)
		}
	}
	if w := f.do(t, "GET", "/ranking-nope", ""); w.Code != 404 {
		t.Fatalf("GET /ranking-nope: %d", w.Code)
	}
}
