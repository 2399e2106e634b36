//go:build duckdb_arrow

package flightsqlsrc_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/flightsqlsrc"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
	"github.com/cqrs-spice/cqrs/internal/testcert"
)

const upstreamKey = "upstream-key"

// TestChainWithKeysAndTLS is TestChain with API keys and TLS on the upstream:
// B sends the key as flightsql_password (Basic handshake, then the bearer
// token), verifies the upstream against the CA of
// flightsql_tls_ca_certificate_file, follows its changes, and after the
// upstream restarts (its old tokens void) handshakes again and catches up.
func TestChainWithKeysAndTLS(t *testing.T) {
	certs := testcert.New(t)
	secure := func(s *flightsrv.Server) {
		s.APIKeys = apikey.ReadOnlyKeys(upstreamKey)
		s.GRPCOptions = append(s.GRPCOptions, grpc.Creds(credentials.NewTLS(certs.ServerConfig(t))))
	}
	a := newUpstream(t, secure)
	endpoint := "https://" + a.srv.Addr()
	params := map[string]string{
		"flightsql_endpoint":                endpoint,
		"flightsql_password":                upstreamKey,
		"flightsql_tls_ca_certificate_file": certs.CAFile,
	}
	src := newSource(t, params, "rankings")
	b := runtimetest.NewEngine(t, materializedPod(endpoint), map[string]engine.Source{"rankings": src}, nil)
	runtimetest.WaitReady(t, b)
	if got, _ := query(t, b, rankingsQuery); !equal(got, wantRankings) {
		t.Fatalf("B=%q, want %q", got, wantRankings)
	}

	// Changes are pushed over the authenticated watch.
	a.change(t, 200, 0)
	runtimetest.WaitWatermark(t, b, "rankings", 200)
	if got, _ := query(t, b, rankingsQuery); !equal(got, wantChangedRankings) {
		t.Errorf("B after the change=%q, want %q", got, wantChangedRankings)
	}

	// A restarts on the same port: B's token is void there; B handshakes again.
	addr := a.srv.Addr()
	runtimetest.StopServer(t, a.srv)
	a.change(t, 300, 100)
	a.srv = runtimetest.StartServerAt(t, addr, a.engine, a.mem, secure)
	runtimetest.WaitWatermark(t, b, "rankings", 300)
}

// TestSecureUpstreamErrors: a wrong key, no key, and no CA each fail with an
// error that says what to check.
func TestSecureUpstreamErrors(t *testing.T) {
	certs := testcert.New(t)
	a := newUpstream(t, func(s *flightsrv.Server) {
		s.APIKeys = apikey.ReadOnlyKeys(upstreamKey)
		s.GRPCOptions = append(s.GRPCOptions, grpc.Creds(credentials.NewTLS(certs.ServerConfig(t))))
	})
	endpoint := "https://" + a.srv.Addr()
	for _, tt := range []struct {
		name   string
		params map[string]string
		want   []string
	}{
		{"right key", map[string]string{"flightsql_password": upstreamKey, "flightsql_tls_ca_certificate_file": certs.CAFile}, nil},
		{"wrong key", map[string]string{"flightsql_password": "nope", "flightsql_tls_ca_certificate_file": certs.CAFile},
			[]string{"refused the credentials", "flightsql_password", "invalid credentials"}},
		{"no key", map[string]string{"flightsql_tls_ca_certificate_file": certs.CAFile},
			[]string{"refused the credentials", "requires an API key"}},
		{"no CA", map[string]string{"flightsql_password": upstreamKey},
			[]string{endpoint, "certificate"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.params["flightsql_endpoint"] = endpoint
			_, _, _, err := scan(t, newSource(t, tt.params, "rankings"), engine.ScanRequest{})
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("scan succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestParseParams_TLSCA(t *testing.T) {
	certs := testcert.New(t)
	cfg, err := flightsqlsrc.ParseParams(map[string]string{
		"flightsql_endpoint": "grpc+tls://localhost:50051", "flightsql_tls_ca_certificate_file": certs.CAFile})
	if err != nil || cfg.Endpoint.RootCAs == nil || !cfg.Endpoint.TLS {
		t.Fatalf("cfg=%+v err=%v, want TLS with the CA", cfg.Endpoint, err)
	}
	for _, tt := range []struct {
		endpoint, ca string
		want         []string
	}{
		{"http://localhost:50051", certs.CAFile, []string{"flightsql_tls_ca_certificate_file is set", "plaintext", "https://"}},
		{"https://localhost:50051", certs.CAFile + ".missing", []string{"flightsql_tls_ca_certificate_file: read the CA file", "no such file"}},
		{"https://localhost:50051", certs.KeyFile, []string{"holds no PEM certificate"}},
	} {
		_, err := flightsqlsrc.ParseParams(map[string]string{"flightsql_endpoint": tt.endpoint, "flightsql_tls_ca_certificate_file": tt.ca})
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s with %s: err=%v, want it to mention %q", tt.endpoint, tt.ca, err, w)
			}
		}
	}
}
