// Package live is the api's live page: the three rankings side by side, each
// with the position it reflects and its lag behind Postgres, the health of
// every runtime replica, and, for the orders posted through the api, how long
// each took to become visible on each path.
//
//	GET /live          the page (HTML, JS, CSS embedded in the binary; no CDN)
//	GET /live/events   server-sent events: one "hello" with the recent writes,
//	                   then one "tick" per sample
//
// One Hub samples the three paths for every viewer at once: every Interval,
// and at once after an order is posted. It reads nothing while nobody watches.
// A viewer that cannot keep up (its buffer of Buffer events is full, or a write
// takes longer than WriteTimeout) is disconnected; the browser's EventSource
// reconnects and starts afresh, so the loop never waits for a viewer. The
// stream needs no credentials, so it is bounded: at most MaxViewers at once
// (503 past it), and, when the server's ConnContext is this package's, a
// socket send buffer of SendBuffer bytes, so that a viewer that stops reading
// blocks its writes, and is dropped, after little is queued for it. Ticks
// carry SSE ids; a reconnecting browser's Last-Event-ID makes its hello say
// how many ticks it missed.
//
// Writes are seen through Orders, which wraps the api's order store: after each
// order the hub reads each runtime once with the order's position as the
// minimum (the runtime answers as soon as its watermark covers it), and the time
// from the write to that answer is the order's write-to-visible lag on that
// path. At most MaxProbes orders are followed at a time, so a load test pays
// for a bounded number of reads; orders posted beyond that are listed as not
// followed.
//
// The browser talks only to the api: the runtimes' keys stay in the api. With
// API_WRITE_KEY set, the page asks for the key and keeps it in the page's
// memory (never in storage or a cookie), sending it in X-API-Key with its POST
// /orders.
//
// Wiring (cmd/api):
//
//	hub := live.NewHub(
//		live.Path{Name: live.PathPostgres, Reader: pg},
//		live.Path{Name: live.PathAccelerated, Reader: acc, Replicas: acc.Replicas},
//		live.Path{Name: live.PathMaterialized, Reader: mat, Replicas: mat.Replicas})
//	hub.Open()
//	server := api.NewServer(hub.Orders(store), pg, acc, mat)
//	server.Live = hub.Handler()
package live
