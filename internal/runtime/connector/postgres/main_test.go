package postgres_test

import (
	"testing"

	"github.com/cqrs-spice/cqrs/internal/pgtest"
)

// pg is the one Postgres server the package's tests share, started by the first
// that needs it; each test gets its own database.
var pg pgtest.Shared

func TestMain(m *testing.M) { pg.Main(m) }

// newDatabase returns the DSN of a fresh database, dropped when tb ends.
func newDatabase(tb testing.TB) string {
	tb.Helper()
	return pg.NewDatabase(tb)
}
