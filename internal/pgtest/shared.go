package pgtest

import (
	"os"
	"strings"
	"sync"
	"testing"
)

// Shared is one Postgres for the tests of a package, started by the first test
// that asks for it, so that the package's tests that need no Postgres run
// without Docker. Its zero value is ready to use; Main terminates it.
//
//	var pg pgtest.Shared
//
//	func TestMain(m *testing.M) { pg.Main(m) }
//
//	func TestX(t *testing.T) {
//		dsn := pg.NewDatabase(t) // starts the server on first use
//	}
type Shared struct {
	once sync.Once
	p    *Postgres
	stop func()
	err  error
}

// Get returns the package's Postgres, starting it on the first call. Under
// `go test -short` (make test-unit) it skips tb instead. A server that cannot
// start (no Docker, no image) fails tb, and every later caller, with the reason.
func (s *Shared) Get(tb testing.TB) *Postgres {
	tb.Helper()
	skipShort(tb)
	s.once.Do(func() { s.p, s.stop, s.err = StartMain() })
	if s.err != nil {
		tb.Fatal(s.err)
	}
	return s.p
}

// NewDatabase is Get(tb).NewDatabase(tb): an empty database of its own for tb.
func (s *Shared) NewDatabase(tb testing.TB) string {
	tb.Helper()
	return s.Get(tb).NewDatabase(tb)
}

// Main is a package's whole TestMain: it clears libpq's environment (see
// ClearLibpqEnv), runs the tests, terminates the server if a test started one,
// and exits with the tests' code.
func (s *Shared) Main(m *testing.M) {
	ClearLibpqEnv()
	code := m.Run()
	if s.stop != nil {
		s.stop()
	}
	os.Exit(code)
}

// skipShort skips tb under -short: what needs Docker is left to `make test`.
func skipShort(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs Postgres in Docker: skipped under -short (make test-unit); make test runs it")
	}
}

// ClearLibpqEnv removes libpq's variables (PGHOST, PGPASSWORD, PGSSLMODE, every
// PG*) from the test process, once: pgx reads them as defaults of every
// connection string, and the tests must connect where their DSNs say whatever
// the caller's shell holds. A test that means to exercise them sets them itself
// (t.Setenv). Main and Start call it.
func ClearLibpqEnv() {
	clearEnv.Do(func() {
		for _, kv := range os.Environ() {
			if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "PG") {
				os.Unsetenv(name)
			}
		}
	})
}

var clearEnv sync.Once
