// Package docs holds the check that keeps README.md and docs/*.md true to the
// code: every `make` target, `--flag` and environment variable they name in code
// spans must exist, and every relative link (with its #anchor) must resolve.
// The values a page states must be the repository's: a variable's default in a
// table row (| `WAIT_TIMEOUT` | `300` |) is checked against the Makefile and
// docker-compose.yml, and a number given for a flag (`--drain` (2 s), or the
// cell after it in a table) against the flag's default in the generated tables
// of docs/configuration.md, which each program's TestDocs keeps equal to its
// code.
//
// Comments and messages in code, compose files, spicepods, scripts and the
// Makefile that cite a page, and a section after a comma
// (`docs/operations.md, Limits`), must cite a heading that exists.
// It has no code of its own; `go test ./internal/docs/` (part of `make test`)
// runs the check.
//
// Conventions the check relies on, for writers of the docs:
//   - a make target is written in code: `make bench` or in a fenced block;
//   - a flag is written in code with two dashes: `--memory-limit`;
//   - an environment variable is written in code alone or as an assignment:
//     `API_WRITE_KEY` or `RUNTIME_PROTOCOL=flightsql`. Names with an underscore
//     are checked against the variables the code, the Makefile, the compose file,
//     the spicepods and the scripts use; other upper-case words (SQL keywords,
//     gRPC codes) are not names of variables.
package docs
