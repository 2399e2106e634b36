//go:build duckdb_arrow

package cdc_test

import (
	"os"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/pgtest"
)

// pg is the Postgres server the package's tests share; each test has its own
// database. A helper process (see TestHelperRuntime) starts none.
var pg *pgtest.Postgres

// helperEnv, when set, makes the test binary a helper process (TestHelperRuntime).
const helperEnv = "CDC_HELPER_DSN"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(m.Run())
	}
	pgtest.Main(m, &pg)
}
