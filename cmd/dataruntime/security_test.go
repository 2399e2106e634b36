//go:build duckdb_arrow

package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/testcert"
)

// TestChainWithKeysAndTLS runs two runtimes as compose does, with API keys and
// TLS on both: B materializes A's view through the flightsql connector, sending
// A's key and verifying A's certificate with the CA; B's HTTP API answers only
// with B's key, over TLS; /v1/ready stays open for health checks.
func TestChainWithKeysAndTLS(t *testing.T) {
	certs := testcert.New(t)
	t.Setenv("TEST_KEY_A", "key-of-a")
	t.Setenv("TEST_KEY_B", "key-of-b")
	security := func(key string) string {
		return fmt.Sprintf(`runtime:
  auth:
    api-key:
      enabled: true
      keys: ['${env:%s}']
  tls:
    enabled: true
    certificate_file: %s
    key_file: %s
`, key, certs.CertFile, certs.KeyFile)
	}
	a := MustRuntime(t, `version: v1
kind: Spicepod
name: a
views:
  - name: rankings
    sql: SELECT 'nintendo' AS name, 30 AS count
`+security("TEST_KEY_A"))
	b := MustRuntime(t, fmt.Sprintf(`version: v1
kind: Spicepod
name: b
datasets:
  - from: flightsql:rankings
    name: rankings
    params:
      flightsql_endpoint: https://%s
      flightsql_password: ${env:TEST_KEY_A}
      flightsql_tls_ca_certificate_file: %s
    acceleration:
      enabled: true
`, a.Flight.Addr(), certs.CAFile)+security("TEST_KEY_B"))

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: certs.ClientConfig()}}
	do := func(method, path, key string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, "https://"+b.HTTP.Addr()+path, strings.NewReader("SELECT name, count FROM rankings"))
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	waitFor(t, "B to be ready", func() bool {
		code, _ := do(http.MethodGet, "/v1/ready", "")
		return code == http.StatusOK
	})
	var stderr strings.Builder
	if code := healthcheck([]string{"--url", "https://" + b.HTTP.Addr() + "/v1/ready", "--ca-file", certs.CAFile}, &stderr); code != 0 {
		t.Errorf("healthcheck over TLS with the CA = %d (%s), want 0", code, stderr.String())
	}
	if code := healthcheck([]string{"--url", "https://" + b.HTTP.Addr() + "/v1/ready"}, &stderr); code == 0 {
		t.Error("healthcheck over TLS without the CA = 0, want a failure")
	}
	if code, body := do(http.MethodPost, "/v1/sql", "key-of-b"); code != http.StatusOK || !strings.Contains(body, "nintendo") {
		t.Errorf("B with its key: %d %q, want 200 with A's row", code, body)
	}
	for _, key := range []string{"", "key-of-a"} {
		if code, body := do(http.MethodPost, "/v1/sql", key); code != http.StatusUnauthorized || !strings.Contains(body, "X-API-Key") {
			t.Errorf("B with key %q: %d %q, want 401 naming X-API-Key", key, code, body)
		}
	}
}
