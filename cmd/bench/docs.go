package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/docgen"
)

// DefaultDocs is the page whose generated:bench block a run rewrites.
const DefaultDocs = "docs/benchmarks.md"

// updateDocs writes the run's summary into the generated:bench block of page,
// stamped with the date and commit. A quick run is too short to quote and
// leaves the page alone, as does an empty page name or a missing page (bench run
// outside the repository).
func updateDocs(page string, rep *bench.Report, out io.Writer) {
	if page == "" || rep.Settings.Quick {
		return
	}
	stamp := docgen.Stamp{Time: rep.Started, Commit: docgen.Commit(context.Background(), filepath.Dir(page))}
	err := docgen.UpdateFile(page, "bench", bench.DocsSummary(rep), stamp)
	switch {
	case err == nil:
		fmt.Fprintf(out, "docs: %s updated\n", page)
	case errors.Is(err, os.ErrNotExist):
	default:
		fmt.Fprintf(out, "note: %v\n", err)
	}
}
