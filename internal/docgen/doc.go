// Package docgen keeps generated text in hand-written Markdown current: a tool
// that produces a table (the benchmark, the chaos run) replaces the text between
// two markers in a docs page with its new output, stamped with the date and the
// commit it was made with, so the page cannot drift from the last run.
//
// A block in a page looks like this:
//
//	<!-- generated:bench begin -->
//	...replaced on every run...
//	<!-- generated:bench end -->
//
// Replace rewrites the text between the markers of one name; UpdateFile does
// so in a file and leaves a file without the markers alone (ErrNoMarkers).
package docgen
