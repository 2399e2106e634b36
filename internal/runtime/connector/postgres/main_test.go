package postgres_test

import (
	"testing"

	"github.com/cqrs-spice/cqrs/internal/pgtest"
)

// pg is the one Postgres server the package's tests share; each test gets its own
// database.
var pg *pgtest.Postgres

func TestMain(m *testing.M) { pgtest.Main(m, &pg) }

// newDatabase returns the DSN of a fresh database, dropped when tb ends.
func newDatabase(tb testing.TB) string {
	tb.Helper()
	return pg.NewDatabase(tb)
}
