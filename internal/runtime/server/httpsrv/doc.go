// Package httpsrv is the runtime's HTTP API, compatible with upstream Spice's:
//
//	GET  /health                                  200 "ok"
//	GET  /v1/ready                                200 "Ready" or 503 "Not Ready"
//	POST /v1/sql                                  body: SQL; JSON (default), CSV, text or Arrow
//	GET  /v1/datasets[?status=true]               datasets and views; status as upstream's word, detail ours
//	POST /v1/datasets/{name}/acceleration/refresh 201, 404 unknown, 400 not accelerated or bad overrides
//	GET  /v1/status                               upstream's list of endpoints
//	GET  /v1/spicepods, /v1/catalogs              the loaded spicepod; no catalogs
//
// Listings answer the JSON shapes upstream's `spice` CLI and gospice decode,
// and CSV with ?format=csv. A refresh body (refresh_sql, refresh_mode,
// refresh_jitter_max) applies to that one refresh (engine.RefreshOverrides).
//
// Beyond upstream, every query answer carries the header Spice-Position (the source
// position it reflects) and Results-Cache-Status; a request may send
// Spice-Min-Position to wait (bounded) for data at least that fresh.
//
// With API keys (Server.APIKeys) every route but /health and /v1/ready needs a
// key (401 without one); a refresh needs a read-write key, upstream's `:rw`
// (403 with a read-only one). Everything else only reads.
package httpsrv
