package postgres_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cqrs-spice/cqrs/internal/pgtest"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/testcert"
)

// TestSource_TLS reads a Postgres with ssl=on through pg_sslmode verify-full
// and the CA of pg_sslrootcert, over TLS; with another CA it fails with ErrTLS
// and says which params to check.
func TestSource_TLS(t *testing.T) {
	cert := testcert.New(t)
	srv := pgtest.StartTLS(t, pgtest.TLS{CertFile: cert.CertFile, KeyFile: cert.KeyFile})
	mustExec(t, srv.DSN, `CREATE TABLE items (id int4, name text)`, `INSERT INTO items VALUES (1, 'a'), (2, 'b')`)
	params := func(mode, ca string) map[string]string {
		return map[string]string{
			postgres.ParamHost: "127.0.0.1", postgres.ParamPort: strconv.Itoa(srv.Port),
			postgres.ParamDB: srv.Database, postgres.ParamUser: srv.User, postgres.ParamPass: srv.Password,
			postgres.ParamSSLMode: mode, postgres.ParamSSLRootCert: ca,
		}
	}

	for _, mode := range []string{"verify-full", "verify-ca"} {
		t.Run(mode, func(t *testing.T) {
			src := mustSource(t, params(mode, cert.CAFile), "public.items")
			got := mustScan(t, src, engine.ScanRequest{})
			if got, want := len(got.rows), 2; got != want {
				t.Fatalf("rows=%d, want %d", got, want)
			}
		})
	}

	t.Run("connection is TLS", func(t *testing.T) {
		cfg := mustConfig(t, params("verify-full", cert.CAFile))
		conn, err := pgx.ConnectConfig(context.Background(), cfg.PoolConfig.ConnConfig)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var ssl bool
		if err := conn.QueryRow(context.Background(), `SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()`).Scan(&ssl); err != nil {
			t.Fatal(err)
		}
		if !ssl {
			t.Fatal("pg_stat_ssl.ssl=false, want true")
		}
	})

	t.Run("wrong CA", func(t *testing.T) {
		other := testcert.New(t)
		src := mustSource(t, params("verify-full", other.CAFile), "public.items")
		_, err := scan(context.Background(), src, engine.ScanRequest{})
		t.Logf("err: %v", err)
		if !errors.Is(err, postgres.ErrTLS) {
			t.Fatalf("err=%v, want ErrTLS", err)
		}
		if want := "pg_sslrootcert"; !strings.Contains(err.Error(), want) {
			t.Fatalf("err=%q, want it to name %s", err, want)
		}
	})
}
