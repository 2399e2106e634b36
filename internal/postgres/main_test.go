package postgres_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/pgtest"
)

// pg is the one Postgres server the package's tests share; each test gets its own
// database.
var pg *pgtest.Postgres

func TestMain(m *testing.M) {
	var stop func()
	var err error
	if pg, stop, err = pgtest.StartMain(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// newDatabase returns the DSN of a fresh database, dropped when tb ends.
func newDatabase(tb testing.TB) string {
	tb.Helper()
	return pg.NewDatabase(tb)
}
