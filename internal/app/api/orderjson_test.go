package api_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/app/api"
	"github.com/cqrs-spice/cqrs/internal/app/orders"
)

// TestAppendOrderJSON: the hand-written encoding of an order is json.Marshal's,
// byte for byte, and declines the times json.Marshal refuses.
func TestAppendOrderJSON(t *testing.T) {
	east := time.FixedZone("east", 5*3600+30*60)
	for _, o := range []orders.Order{
		{},
		{ID: 1, ProductID: 2, Count: 3, CreatedAt: createdAt},
		{ID: 1<<63 - 1, ProductID: -7, Count: 10000, CreatedAt: time.Date(2026, 12, 3, 12, 0, 0, 123456000, time.UTC)},
		{ID: 42, ProductID: 1, Count: 1, CreatedAt: time.Date(1999, 2, 3, 4, 5, 6, 7, east)},
		{ID: 42, ProductID: 1, Count: 1, CreatedAt: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)},
	} {
		want, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := api.AppendOrderJSON([]byte("x"), o)
		if !ok || string(got) != "x"+string(want) {
			t.Errorf("AppendOrderJSON(%+v)=%q, %v; want %q as json.Marshal writes it", o, got, ok, want)
		}
	}
	for _, year := range []int{-1, 10000} {
		o := orders.Order{ID: 1, CreatedAt: time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)}
		if _, err := json.Marshal(o); err == nil {
			t.Fatalf("json.Marshal accepts year %d; the test's premise is wrong", year)
		}
		if _, ok := api.AppendOrderJSON(nil, o); ok {
			t.Errorf("AppendOrderJSON accepts year %d, which json.Marshal refuses", year)
		}
	}
}

// TestRequestLog_Client: the request log names the client from X-Forwarded-For
// only when a trusted proxy sent the request.
func TestRequestLog_Client(t *testing.T) {
	f := newFixture(t)
	f.server.Logger = slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := f.server.Handler()
	for _, tt := range []struct{ peer, xff, want string }{
		{"127.0.0.1:4000", "203.0.113.7", "client=203.0.113.7"},
		{"127.0.0.1:4000", "", "client=127.0.0.1"},
		{"198.51.100.1:4000", "203.0.113.7", "client=198.51.100.1"},
	} {
		req := httptest.NewRequest("GET", "/noop", nil)
		req.RemoteAddr = tt.peer
		if tt.xff != "" {
			req.Header.Set("X-Forwarded-For", tt.xff)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("status=%d", w.Code)
		}
		lines := strings.Split(strings.TrimSpace(f.log.String()), "\n")
		if last := lines[len(lines)-1]; !strings.Contains(last, tt.want) {
			t.Errorf("peer %s, X-Forwarded-For %q: log line %q, want %s", tt.peer, tt.xff, last, tt.want)
		}
	}
}
