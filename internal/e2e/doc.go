// Package e2e holds the end-to-end tests of the whole stack under Docker Compose.
// Each starts the compose project from scratch on free ports and tears it down,
// leaving no container or volume.
//
// With the e2e build tag, the stack test writes orders through the api and checks
// that all three ranking endpoints converge to exactly what Postgres says, then
// runs the benchmark's smoke setting against it:
//
//	go test -tags e2e ./internal/e2e/
//
// The same tag runs TestStackTLS (about 40 s): the stack as make TLS=1 starts it
// (docker-compose.tls.yml, certificates from cmd/devcerts in a temporary
// directory given as TLS_CERTS_DIR), checking that the rankings converge, that
// every TCP client of Postgres is on TLS and a plain one is refused, and that the
// runtimes' HTTP and Flight ports answer TLS only.
//
// With the browser build tag, the live page's test drives /live in headless
// Chromium (Debian's chromium package, through chromedp) with a write key on: no
// console error, the three rankings equal Postgres's, an order posted with the
// page's button shows on every path with its time to visible, and a killed
// runtime shows as down, then up. SCREENSHOT=path (and SCREENSHOT_PHONE=path)
// save the page; make screenshot writes docs/img/live.png:
//
//	go test -tags browser ./internal/e2e/
//
// Both need the images (make images).
package e2e
