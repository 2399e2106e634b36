package main_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/pgtest"
)

// TestPostgresPassword: POSTGRES_PASSWORD is set on a POSTGRES_URL without a
// password (the compose stack's wiring); a wrong one makes /readyz say what to
// check; a URL's own password wins over it.
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
	for _, tt := range []struct {
		name, url, password string
		ok                  bool
	}{
		{"password from POSTGRES_PASSWORD", bare, pgtest.DefaultPassword, true},
		{"wrong POSTGRES_PASSWORD", bare, "not-the-password", false},
		{"the URL's password wins", withPassword, "not-the-password", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := runMain(t, map[string]string{
				"API_ADDR":                 "127.0.0.1:0",
				"POSTGRES_URL":             tt.url,
				"POSTGRES_PASSWORD":        tt.password,
				"ACCELERATED_FLIGHT_ADDR":  unreachable,
				"MATERIALIZED_FLIGHT_ADDR": unreachable,
			})
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
