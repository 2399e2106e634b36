// Package docgen keeps generated text in hand-written Markdown current, so the
// docs and the code (or the last run) cannot disagree. Text goes between two
// markers in a page:
//
//	<!-- generated:flags-api begin -->
//	...replaced by the generator...
//	<!-- generated:flags-api end -->
//
// Reference tables are derived from the code: FlagTable renders a program's
// *flag.FlagSet (name, default, usage, as --help prints them) and VarTable a
// table of environment variables declared in code ([]Var, which PrintVars also
// prints for --help). Each program's package has a test named TestDocs that
// calls Check with its blocks: it fails when docs/configuration.md differs from
// the code and, with DOCS_UPDATE=1 (make docs), rewrites the page instead. A
// program joins by exposing a function that returns its flag set and adding
// such a test:
//
//	func TestDocs(t *testing.T) {
//		blocks := map[string]string{"flags-bench": docgen.FlagTable(benchFlags(io.Discard))}
//		if err := docgen.Check("../../docs/configuration.md", blocks, docgen.Updating()); err != nil {
//			t.Fatal(err)
//		}
//	}
//
// Results are written by the tool that measured them (the benchmark, the chaos
// run): Replace and UpdateFile put the new output between the markers, stamped
// with the date and the commit it was made with (Stamp).
//
// ReplaceBlock and Replace rewrite every block of one name; UpdateFile does so in
// a file and leaves a file without the markers alone (ErrNoMarkers).
package docgen
