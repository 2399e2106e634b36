//go:build duckdb_arrow

package cdc_test

import (
	"testing"

	"github.com/cqrs-spice/cqrs/internal/pgtest"
)

// pg is the Postgres server the package's tests share, started by the first
// that needs it; each test has its own database. A helper process (see
// TestHelperRuntime) needs none, so starts none.
var pg pgtest.Shared

// helperEnv, when set, makes the test binary a helper process (TestHelperRuntime).
const helperEnv = "CDC_HELPER_DSN"

func TestMain(m *testing.M) { pg.Main(m) }
