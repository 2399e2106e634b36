// Package pgtest gives integration tests a real Postgres: a throwaway container
// started with testcontainers-go from the project's Postgres image, configured for
// logical replication.
//
// A test that needs its own server calls Start, which terminates the container when
// the test ends:
//
//	pg := pgtest.Start(t)
//	pool, err := pgxpool.New(ctx, pg.DSN)
//
// A package whose tests can share one server declares a Shared, which starts the
// server for the first test that asks for it, and gives each test its own
// database, which is much cheaper than a container per test. Tests of the package
// that never ask need no Docker:
//
//	var pg pgtest.Shared
//
//	func TestMain(m *testing.M) { pg.Main(m) } // terminates the server, if started
//
//	func TestX(t *testing.T) {
//		dsn := pg.NewDatabase(t) // dropped when the test ends
//	}
//
// Under `go test -short` (make test-unit) every test that asks for a server is
// skipped, saying so; without -short (make test) a server that cannot start fails
// the test with the reason, never skips it.
//
// pgx reads libpq's environment (PGHOST, PGPASSWORD, PGSSLMODE...) as the
// defaults of every connection string, so Main and Start clear every PG*
// variable from the test process first: what a test connects to is what its DSN
// says, whatever the caller's shell holds. A test of that environment sets the
// variables itself with t.Setenv.
//
// The image is POSTGRES_IMAGE, default DefaultImage (cqrs-postgres:15, built by
// `make postgres-image`, also from Debian packages when no registry is reachable).
// The server runs with wal_level=logical, 20 replication slots and WAL senders, and
// fsync off (test data is disposable). Its host port stays the same across Stop and
// Start, so a test can take Postgres away and bring it back under a client that
// keeps its DSN.
//
// StartTLS starts one with ssl=on and a given certificate (internal/testcert
// makes one), for clients that verify it (sslmode=verify-full, sslrootcert).
//
// Ryuk, testcontainers' reaper, is an image that cannot be pulled offline, so
// pgtest sets TESTCONTAINERS_RYUK_DISABLED=true unless the environment says
// otherwise, and terminates every container itself (t.Cleanup, Shared.Main, or
// the stop function of StartMain). A test binary killed before its cleanup leaves
// its container behind; such containers carry the label LabelKey and `make clean`
// removes them.
package pgtest
