package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/chaos"
	"github.com/cqrs-spice/cqrs/internal/docgen"
)

// DefaultDocs is the page whose generated:chaos block a full run rewrites.
const DefaultDocs = "docs/chaos.md"

// updateDocs writes the table of a run of every fault into the generated:chaos
// block of page, stamped with the date and commit. A run of some faults (--faults,
// --quick) leaves the page alone, as does an empty page name or a missing page.
func updateDocs(page string, all bool, rep chaos.Report, md string, out io.Writer) {
	if page == "" || !all {
		return
	}
	body := strings.Replace(md, "# Chaos run ", "Run of ", 1)
	stamp := docgen.Stamp{Time: rep.Started, Commit: docgen.Commit(context.Background(), filepath.Dir(page))}
	err := docgen.UpdateFile(page, "chaos", body, stamp)
	switch {
	case err == nil:
		fmt.Fprintf(out, "docs: %s updated\n", page)
	case errors.Is(err, os.ErrNotExist):
	default:
		fmt.Fprintf(out, "note: %v\n", err)
	}
}
