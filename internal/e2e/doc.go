// Package e2e holds the end-to-end test of the whole stack under Docker Compose:
// it starts the compose project from scratch on free ports, writes orders through
// the api, checks that all three ranking endpoints converge to exactly what
// Postgres says, and tears everything down, leaving no container or volume.
//
// It needs the images (make images) and runs with the e2e build tag:
//
//	go test -tags e2e ./internal/e2e/
package e2e
