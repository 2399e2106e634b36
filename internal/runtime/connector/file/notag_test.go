//go:build !duckdb_arrow

package file

import (
	"testing"

	"github.com/cqrs-spice/cqrs/internal/tagtest"
)

// Without the duckdb_arrow tag this package's tests are left out: say so.
func TestNeedsDuckDBArrowTag(t *testing.T) { tagtest.Missing(t) }
