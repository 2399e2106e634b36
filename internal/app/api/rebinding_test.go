package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// A page of another site whose name an attacker points at the api (DNS
// rebinding) sends Host and Origin of that name: same-origin to the browser,
// refused by the api, reads and writes alike. The api opened by address or
// localhost, a listed name, and clients that are not browsers pass.
func TestBrowsersMustNameTheAPIByAKnownHost(t *testing.T) {
	f := newFixture(t)
	f.server.Addr = "127.0.0.1:0"
	f.server.AllowedHosts = []string{"shop.internal"}
	created := 0
	f.store.createRandom = func(ctx context.Context) (orders.Order, position.LSN, error) {
		created++
		return orders.Order{ID: 1, ProductID: 1, Count: 1, CreatedAt: createdAt}, 1, nil
	}
	if err := f.server.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.server.Close(context.Background()) })
	port := strings.TrimPrefix(f.server.URL(), "http://127.0.0.1")

	for _, tt := range []struct {
		name, method, path, host string
		header                   []string
		status                   int
	}{
		{"rebound write", "POST", "/orders", "evil.example" + port, []string{"Origin", "http://evil.example" + port, "Sec-Fetch-Site", "same-origin"}, 403},
		{"rebound read", "GET", "/healthz", "evil.example" + port, []string{"Sec-Fetch-Site", "same-origin", "Sec-Fetch-Mode", "cors"}, 403},
		{"rebound page", "GET", "/", "evil.example" + port, []string{"Sec-Fetch-Mode", "navigate"}, 403},
		{"by address", "POST", "/orders", "127.0.0.1" + port, []string{"Origin", "http://127.0.0.1" + port, "Sec-Fetch-Site", "same-origin"}, 201},
		{"by localhost", "POST", "/orders", "localhost" + port, []string{"Origin", "http://localhost" + port}, 201},
		{"by IPv6 address", "GET", "/healthz", "[::1]" + port, []string{"Sec-Fetch-Site", "same-origin"}, 200},
		{"listed name", "POST", "/orders", "shop.internal" + port, []string{"Origin", "http://shop.internal" + port}, 201},
		{"not a browser", "POST", "/orders", "evil.example" + port, nil, 201},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := created
			req, err := http.NewRequest(tt.method, f.server.URL()+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tt.host
			for i := 0; i+1 < len(tt.header); i += 2 {
				req.Header.Set(tt.header[i], tt.header[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status=%d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status == 403 && created != before {
				t.Fatal("a refused request created an order")
			}
		})
	}
}
