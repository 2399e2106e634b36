package httpsrv_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/httpsrv"
	"github.com/cqrs-spice/cqrs/internal/testcert"
)

// fakeEngine is ready and lists one dataset; queries are not needed here.
type fakeEngine struct{}

func (fakeEngine) Query(context.Context, engine.Query) (*engine.Result, error) {
	return nil, errors.New("not used")
}
func (fakeEngine) Ready() bool                                       { return true }
func (fakeEngine) RefreshWith(string, engine.RefreshOverrides) error { return nil }
func (fakeEngine) Status(context.Context) []engine.Status {
	return []engine.Status{{Name: "orders", Kind: "dataset", Accelerated: true}}
}
func (fakeEngine) StatusOf(context.Context, string) (engine.Status, error) {
	return engine.Status{}, engine.ErrUnknownDataset
}

func start(t *testing.T, configure func(*httpsrv.Server)) *httpsrv.Server {
	t.Helper()
	srv := httpsrv.New("127.0.0.1:0", fakeEngine{})
	if configure != nil {
		configure(srv)
	}
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	return srv
}

func get(t *testing.T, c *http.Client, url string, header ...string) (int, string) {
	t.Helper()
	return send(t, c, http.MethodGet, url, header...)
}

func send(t *testing.T, c *http.Client, method, url string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestAPIKeys(t *testing.T) {
	srv := start(t, func(s *httpsrv.Server) { s.APIKeys = apikey.ReadOnlyKeys("key-one", "key-two") })
	base := "http://" + srv.Addr()
	for _, tt := range []struct {
		name, path string
		header     []string
		code       int
		body       string
	}{
		{"no key", "/v1/datasets", nil, http.StatusUnauthorized, "missing API key"},
		{"wrong key", "/v1/datasets", []string{"X-API-Key", "key-three"}, http.StatusUnauthorized, "invalid API key"},
		{"prefix of a key", "/v1/datasets", []string{"X-API-Key", "key-on"}, http.StatusUnauthorized, "invalid API key"},
		{"key", "/v1/datasets", []string{"X-API-Key", "key-one"}, http.StatusOK, `"orders"`},
		{"second key", "/v1/status", []string{"X-API-Key", "key-two"}, http.StatusOK, ""},
		{"bearer key", "/v1/datasets", []string{"Authorization", "Bearer key-two"}, http.StatusOK, `"orders"`},
		{"basic is not a key", "/v1/datasets", []string{"Authorization", "Basic a2V5LW9uZQ=="}, http.StatusUnauthorized, "missing API key"},
		{"health open", "/health", nil, http.StatusOK, "ok"},
		{"ready open", "/v1/ready", nil, http.StatusOK, "Ready"},
		{"unknown path still needs a key", "/v1/nothing", nil, http.StatusUnauthorized, "X-API-Key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := get(t, http.DefaultClient, base+tt.path, tt.header...)
			if code != tt.code || !strings.Contains(body, tt.body) {
				t.Errorf("GET %s = %d %q, want %d containing %q", tt.path, code, body, tt.code, tt.body)
			}
		})
	}
}

// TestAPIKeyAccess: a read-only key (upstream's `:ro`, or no suffix) reads
// but may not refresh; a read-write key (`:rw`) does both.
func TestAPIKeyAccess(t *testing.T) {
	srv := start(t, func(s *httpsrv.Server) {
		s.APIKeys = []apikey.Key{{Secret: "reader", Access: apikey.ReadOnly}, {Secret: "admin", Access: apikey.ReadWrite}}
	})
	base := "http://" + srv.Addr()
	const refresh = "/v1/datasets/orders/acceleration/refresh"
	for _, tt := range []struct {
		name, method, path string
		header             []string
		code               int
		body               string
	}{
		{"read-only reads", http.MethodGet, "/v1/datasets", []string{"X-API-Key", "reader"}, http.StatusOK, `"orders"`},
		{"read-only status", http.MethodGet, "/v1/status", []string{"Authorization", "Bearer reader"}, http.StatusOK, ""},
		{"read-only refresh", http.MethodPost, refresh, []string{"X-API-Key", "reader"}, http.StatusForbidden, "read-only"},
		{"read-only refresh names :rw", http.MethodPost, refresh, []string{"Authorization", "Bearer reader"}, http.StatusForbidden, ":rw"},
		{"read-write reads", http.MethodGet, "/v1/datasets", []string{"X-API-Key", "admin"}, http.StatusOK, `"orders"`},
		{"read-write refresh", http.MethodPost, refresh, []string{"X-API-Key", "admin"}, http.StatusCreated, "refresh triggered"},
		{"unknown key refresh", http.MethodPost, refresh, []string{"X-API-Key", "admin:rw"}, http.StatusUnauthorized, "invalid API key"},
		{"no key refresh", http.MethodPost, refresh, nil, http.StatusUnauthorized, "missing API key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := send(t, http.DefaultClient, tt.method, base+tt.path, tt.header...)
			if code != tt.code || !strings.Contains(body, tt.body) {
				t.Errorf("%s %s = %d %q, want %d containing %q", tt.method, tt.path, code, body, tt.code, tt.body)
			}
		})
	}
}

func TestNoKeysIsOpen(t *testing.T) {
	srv := start(t, nil)
	if code, body := get(t, http.DefaultClient, "http://"+srv.Addr()+"/v1/datasets"); code != http.StatusOK {
		t.Errorf("without keys configured: %d %q, want 200", code, body)
	}
	if code, body := send(t, http.DefaultClient, http.MethodPost, "http://"+srv.Addr()+"/v1/datasets/orders/acceleration/refresh"); code != http.StatusCreated {
		t.Errorf("refresh without keys configured: %d %q, want 201", code, body)
	}
}

func TestTLS(t *testing.T) {
	certs := testcert.New(t)
	srv := start(t, func(s *httpsrv.Server) {
		s.TLS = certs.ServerConfig(t)
		s.APIKeys = apikey.ReadOnlyKeys("key-one")
	})
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: certs.ClientConfig()}}
	code, body := get(t, client, "https://"+srv.Addr()+"/v1/datasets", "X-API-Key", "key-one")
	if code != http.StatusOK || !strings.Contains(body, "orders") {
		t.Errorf("over TLS: %d %q, want 200 listing orders", code, body)
	}
	if code, _ := get(t, client, "https://"+srv.Addr()+"/v1/datasets"); code != http.StatusUnauthorized {
		t.Errorf("over TLS without key: %d, want 401", code)
	}

	// Plaintext on the TLS port fails; so does a client that does not trust the CA.
	resp, err := http.Get("http://" + srv.Addr() + "/health")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plaintext request to the TLS port answered 200")
		}
	}
	untrusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}}
	if _, err := untrusting.Get("https://" + srv.Addr() + "/health"); err == nil {
		t.Error("a client without the test CA connected")
	}
}
