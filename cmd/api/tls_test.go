//go:build duckdb_arrow

package main_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	main "github.com/cqrs-spice/cqrs/cmd/api"
	"github.com/cqrs-spice/cqrs/internal/app/replicas"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/flightsrv"
	"github.com/cqrs-spice/cqrs/internal/testcert"
)

// startRuntime serves the recipe's runtime 1 from our real engine and Flight
// server, over TLS with cfg when it is not nil.
func startRuntime(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	products, orders := runtimetest.RecipeSources(t, mem, 0x1_0000_0100)
	e := runtimetest.NewEngine(t, runtimetest.RecipePod,
		map[string]engine.Source{"products": products, "orders": orders}, nil)
	runtimetest.WaitReady(t, e)
	srv := runtimetest.StartServer(t, e, mem, func(s *flightsrv.Server) {
		if cfg != nil {
			s.GRPCOptions = append(s.GRPCOptions, grpc.Creds(credentials.NewTLS(cfg)))
		}
	})
	return srv.Addr()
}

// TestRanking_RealRuntime_TLS reads both runtime endpoints of a TLS runtime
// through the api's real wiring: the readers and the replicas' health watch
// dial with the CA of *_FLIGHT_TLS_CA_FILE.
func TestRanking_RealRuntime_TLS(t *testing.T) {
	cert := testcert.New(t)
	addr := startRuntime(t, cert.ServerConfig(t))
	m := MustRunMain(t, map[string]string{
		"ACCELERATED_FLIGHT_ADDR":         addr,
		"ACCELERATED_FLIGHT_TLS":          "true",
		"ACCELERATED_FLIGHT_TLS_CA_FILE":  cert.CAFile,
		"MATERIALIZED_FLIGHT_ADDR":        addr,
		"MATERIALIZED_FLIGHT_TLS":         "true",
		"MATERIALIZED_FLIGHT_TLS_CA_FILE": cert.CAFile,
	})
	want := "==== Leading Products ====\n" +
		"        30 sold: nintendo\n" +
		"        20 sold: the most delicious chocalate\n" +
		"        10 sold: the most beautiful flower\n"
	for _, path := range []string{"/ranking-accelerated", "/ranking-materialized"} {
		a := do(t, m, "GET", path, "")
		if a.status != http.StatusOK || a.body != want {
			t.Fatalf("%s: %d\n%s\nwant 200\n%s", path, a.status, a.body, want)
		}
	}
	// The health watch dials with TLS too: a plaintext one would never see SERVING.
	for _, p := range []*replicas.Pool{m.Accelerated, m.Materialized} {
		waitHealthy(t, p)
	}
}

// waitHealthy waits until p's one replica's health watch says SERVING.
func waitHealthy(t *testing.T, p *replicas.Pool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := p.Replicas()
		if len(st) == 1 && st[0].Healthy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicas=%+v, want one healthy", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRanking_RealRuntime_TLSMismatch: a runtime whose certificate the api
// does not trust, and a plaintext client of a TLS runtime, answer 503 with an
// error that says to check TLS.
func TestRanking_RealRuntime_TLSMismatch(t *testing.T) {
	cert, other := testcert.New(t), testcert.New(t)
	addr := startRuntime(t, cert.ServerConfig(t))
	m := MustRunMain(t, map[string]string{
		"ACCELERATED_FLIGHT_ADDR":        addr,
		"ACCELERATED_FLIGHT_TLS":         "true",
		"ACCELERATED_FLIGHT_TLS_CA_FILE": other.CAFile,
		"MATERIALIZED_FLIGHT_ADDR":       addr, // plaintext
	})
	for path, msg := range map[string]string{
		"/ranking-accelerated":  "the TLS handshake failed: check",
		"/ranking-materialized": "whether it serves TLS",
	} {
		// The first read waits for the pool's first resolution, so it is
		// the replica's dial that fails, not the lookup.
		a := do(t, m, "GET", path, "")
		if a.status != http.StatusServiceUnavailable || !strings.Contains(errorOf(t, a), msg) {
			t.Fatalf("%s: %d %s, want 503 with %q", path, a.status, a.body, msg)
		}
	}
}

func TestRun_TLSCAFileErrors(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, file, contains string
	}{
		{"missing", filepath.Join(t.TempDir(), "nope.pem"), `MATERIALIZED_FLIGHT_TLS_CA_FILE="` + filepath.Join(t.TempDir(), "nope.pem")},
		{"not PEM", notPEM, `MATERIALIZED_FLIGHT_TLS_CA_FILE="` + notPEM + `" holds no PEM certificate`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := main.LoadConfig(env(map[string]string{
				"POSTGRES_URL":                    "postgres://u:p@127.0.0.1:1/db?sslmode=disable",
				"MATERIALIZED_FLIGHT_TLS":         "true",
				"MATERIALIZED_FLIGHT_TLS_CA_FILE": tt.file,
			}))
			if err != nil {
				t.Fatal(err)
			}
			m := main.NewMain()
			m.Config = cfg
			err = m.Run(context.Background())
			_ = m.Close()
			if err == nil || !strings.Contains(err.Error(), "MATERIALIZED_FLIGHT_TLS_CA_FILE=") {
				t.Fatalf("err=%v, want it to name MATERIALIZED_FLIGHT_TLS_CA_FILE", err)
			}
			if tt.name == "not PEM" && !strings.Contains(err.Error(), tt.contains) {
				t.Fatalf("err=%q, want it to contain %q", err, tt.contains)
			}
		})
	}
}
