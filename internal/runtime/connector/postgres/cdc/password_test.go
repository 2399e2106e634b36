//go:build duckdb_arrow

package cdc_test

import (
	"net/url"
	"strings"
	"testing"
)

// TestWrongPasswordSaysWhatToCheck: a rejected password (a Postgres volume
// that kept an older one) is reported with what to check, not only the
// driver's SQLSTATE.
func TestWrongPasswordSaysWhatToCheck(t *testing.T) {
	dsn := pg.NewDatabase(t)
	seedRecipe(t, dsn)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "not-the-password")
	r := startRuntime(t, pod(u.String(), "memory"), "", nil)
	waitFor(t, "the feed to report the rejected password", func() bool { return strings.Contains(r.log.String(), "28P01") })
	for _, want := range []string{"check pg_pass", "POSTGRES_PASSWORD", "first initialised"} {
		if !strings.Contains(r.log.String(), want) {
			t.Errorf("log does not mention %q:\n%s", want, r.log.String())
		}
	}
}
