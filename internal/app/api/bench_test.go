package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// BenchmarkHandler measures the api's own work per request (routing,
// middleware, decoding, encoding) over fakes and a discarding log at the
// default level: what a request costs before Postgres or a runtime is asked.
func BenchmarkHandler(b *testing.B) {
	f := newFixture(b)
	f.server.Logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	order := orders.Order{ID: 123456, ProductID: 2, Count: 55, CreatedAt: createdAt}
	f.store.createRandom = func(ctx context.Context) (orders.Order, position.LSN, error) {
		return order, 0x1_00000010, nil
	}
	f.store.create = func(ctx context.Context, o orders.NewOrder) (orders.Order, position.LSN, error) {
		return order, 0x1_00000010, nil
	}
	h := f.server.Handler()
	for _, bc := range []struct {
		name, method, target, body, contentType string
		status                                  int
	}{
		{"POST /orders random", "POST", "/orders", "", "", http.StatusCreated},
		{"POST /orders body", "POST", "/orders", `{"product_id": 2, "count": 55}`, "application/json", http.StatusCreated},
		{"GET /noop", "GET", "/noop", "", "", http.StatusOK},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var body io.Reader = http.NoBody
				if bc.body != "" {
					body = strings.NewReader(bc.body)
				}
				req := httptest.NewRequest(bc.method, bc.target, body)
				if bc.contentType != "" {
					req.Header.Set("Content-Type", bc.contentType)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != bc.status {
					b.Fatalf("status=%d, want %d: %s", w.Code, bc.status, w.Body)
				}
			}
		})
	}
}
