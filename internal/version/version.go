// Package version holds the version the binaries report (--version, the start
// log line). `make build` sets it from the VERSION file with
//
//	-ldflags '-X github.com/cqrs-spice/cqrs/internal/version.Version=0.6.0'
//
// A plain `go build` leaves it at "dev".
package version

// Version is the release this binary was built as; "dev" when built without
// the Makefile.
var Version = "dev"
