package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	main "github.com/cqrs-spice/cqrs/cmd/api"
	"github.com/cqrs-spice/cqrs/internal/pgtest"
)

// TestPostgresPassword: the password is the URL's own, else POSTGRES_PASSWORD
// (the compose stack's wiring), else libpq's PGPASSWORD, whatever PGPASSWORD
// the caller's environment holds; a wrong one makes /readyz say what to check;
// the start line names the source.
func TestPostgresPassword(t *testing.T) {
	dsn := pg.NewDatabase(t)
	mustApplyInitSQL(t, dsn)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	withPassword := u.String()
	u.User = url.User(u.User.Username())
	bare := u.String()
	port := u.Port()
	keywords := fmt.Sprintf("host=%s port=%s dbname=%s user=%s sslmode=disable", u.Hostname(), port, strings.TrimPrefix(u.Path, "/"), u.User.Username())
	const wrong = "not-the-password"
	for _, tt := range []struct {
		name, url, password, pgpassword string
		ok                              bool
		source                          string
	}{
		{"POSTGRES_PASSWORD over a wrong PGPASSWORD", bare, pgtest.DefaultPassword, wrong, true, main.PasswordFromSetting},
		{"POSTGRES_PASSWORD, key=value form", keywords, pgtest.DefaultPassword, wrong, true, main.PasswordFromSetting},
		{"wrong POSTGRES_PASSWORD", bare, wrong, pgtest.DefaultPassword, false, main.PasswordFromSetting},
		{"the URL's password wins", withPassword, wrong, wrong, true, main.PasswordFromURL},
		{"the keyword's password wins", keywords + " password=" + pgtest.DefaultPassword, wrong, wrong, true, main.PasswordFromURL},
		{"PGPASSWORD alone", bare, "", pgtest.DefaultPassword, true, main.PasswordFromEnv},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PGPASSWORD", tt.pgpassword)
			var log syncBuffer
			m := runMainLogged(t, &log, map[string]string{
				"API_ADDR":                 "127.0.0.1:0",
				"POSTGRES_URL":             tt.url,
				"POSTGRES_PASSWORD":        tt.password,
				"ACCELERATED_FLIGHT_ADDR":  unreachable,
				"MATERIALIZED_FLIGHT_ADDR": unreachable,
			})
			if got, want := m.PasswordSource, tt.source; got != want {
				t.Errorf("password source %q, want %q", got, want)
			}
			if want := "postgres_password=" + tt.source; !strings.Contains(log.String(), want) {
				t.Errorf("start line lacks %q:\n%s", want, log.String())
			}
			var r struct {
				Dependencies map[string]struct{ Status, Error string }
			}
			if err := json.Unmarshal([]byte(do(t, m, "GET", "/readyz", "").body), &r); err != nil {
				t.Fatal(err)
			}
			got := r.Dependencies["postgres"]
			if !tt.ok {
				for _, want := range []string{"rejected the password", "POSTGRES_PASSWORD", "secrets.env", "docs/operations.md"} {
					if !strings.Contains(got.Error, want) {
						t.Errorf("postgres error %q does not mention %q", got.Error, want)
					}
				}
				return
			}
			if got.Status != "ok" {
				t.Fatalf("postgres %+v, want ok", got)
			}
			a := do(t, m, "POST", "/orders", `{"product_id": 3, "count": 5}`, "Content-Type", "application/json")
			if a.status != http.StatusCreated {
				t.Fatalf("POST /orders = %d %s, want 201", a.status, a.body)
			}
		})
	}
}

// runMainLogged is runMain with the log also written to w.
func runMainLogged(tb testing.TB, w io.Writer, vars map[string]string) *main.Main {
	tb.Helper()
	cfg, err := main.LoadConfig(env(vars))
	if err != nil {
		tb.Fatal(err)
	}
	m := main.NewMain()
	m.Config = cfg
	m.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(w, testWriter{tb}), nil))
	if err := m.Run(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = m.Close() })
	return m
}

// syncBuffer is a bytes.Buffer that goroutines may write while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
