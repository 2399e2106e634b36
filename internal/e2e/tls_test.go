//go:build e2e

package e2e_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// TestStackTLS runs the stack as make TLS=1 does (docker-compose.tls.yml, with
// certificates from cmd/devcerts) and checks that every hop is TLS: the rankings
// converge, every TCP client of Postgres is on TLS and a plain one is refused,
// and the runtimes' HTTP and Flight ports answer TLS only.
func TestStackTLS(t *testing.T) {
	certs := mustDevCerts(t)
	s := MustStack(t, "COMPOSE_FILE=docker-compose.yml:docker-compose.tls.yml", "COMPOSE_PATH_SEPARATOR=:",
		"TLS_CERTS_DIR="+certs)
	pgPort := s.port(t, "POSTGRES_PORT")
	// The password MustStack read from secrets.env, over TLS this time.
	u, err := url.Parse(s.pgURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = "127.0.0.1:" + pgPort
	u.RawQuery = "sslmode=verify-full&sslrootcert=" + url.QueryEscape(certs+"/ca.pem")
	s.pgURL = u.String()

	token := s.postOrders(t, 5)
	want := s.truth(t)
	for _, path := range []string{"/ranking", "/ranking-accelerated", "/ranking-materialized"} {
		if got, _, code := s.ranking(t, path, token); code != http.StatusOK || got != want {
			t.Fatalf("%s: %d %s, want 200 %s (Postgres)", path, code, got, want)
		}
	}

	t.Run("postgres", func(t *testing.T) {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, s.pgURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var plain, secure, walsenders int
		if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE NOT s.ssl), count(*) FILTER (WHERE s.ssl),
			count(*) FILTER (WHERE s.ssl AND a.backend_type = 'walsender')
			FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.client_addr IS NOT NULL`).Scan(&plain, &secure, &walsenders); err != nil {
			t.Fatal(err)
		}
		// The api's pools, runtime 1's pool and its replication stream, this test.
		if plain != 0 || secure < 3 || walsenders < 1 {
			t.Fatalf("TCP clients: %d plain, %d TLS (%d replication), want 0 plain, the api's, runtime 1's and its replication on TLS", plain, secure, walsenders)
		}
		_, err = pgx.Connect(ctx, strings.Replace(s.pgURL, "sslmode=verify-full", "sslmode=disable", 1))
		if err == nil || !strings.Contains(err.Error(), "no pg_hba.conf entry") {
			t.Fatalf("plain connection: err=%v, want it refused (no pg_hba.conf entry)", err)
		}
	})

	pool := x509.NewCertPool()
	ca, err := os.ReadFile(certs + "/ca.pem")
	if err != nil || !pool.AppendCertsFromPEM(ca) {
		t.Fatalf("read CA: %v", err)
	}
	for _, rt := range []string{"ACCELERATED", "MATERIALIZED"} {
		t.Run(strings.ToLower(rt), func(t *testing.T) {
			httpAddr := "127.0.0.1:" + s.port(t, rt+"_HTTP_PORT")
			flightAddr := "127.0.0.1:" + s.port(t, rt+"_FLIGHT_PORT")
			secure := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
			if resp, err := secure.Get("https://" + httpAddr + "/health"); err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("https /health: %v %v, want 200", resp, err)
			}
			if resp, err := http.Get("http://" + httpAddr + "/health"); err == nil && resp.StatusCode == http.StatusOK {
				t.Fatal("plain http /health answered 200, want TLS only")
			}
			if err := healthCheck(flightAddr, credentials.NewTLS(&tls.Config{RootCAs: pool})); err != nil {
				t.Fatalf("Flight over TLS: %v", err)
			}
			if err := healthCheck(flightAddr, insecure.NewCredentials()); err == nil {
				t.Fatal("plaintext Flight answered, want TLS only")
			}
		})
	}
}

// mustDevCerts makes the TLS mode's certificates with cmd/devcerts in a
// directory the containers' users can read.
func mustDevCerts(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cqrs-e2e-certs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./cmd/devcerts", "--dir", dir)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("devcerts: %v\n%s", err, out)
	}
	return dir
}

// port returns the host port the stack publishes for name (API_PORT, ...).
func (s *stack) port(tb testing.TB, name string) string {
	tb.Helper()
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	tb.Fatalf("no %s in the stack's settings", name)
	return ""
}

func healthCheck(addr string, creds credentials.TransportCredentials) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}
