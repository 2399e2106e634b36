package live

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Defaults of the event stream's bounds.
const (
	// DefaultWriteTimeout bounds writing one event to a viewer; a viewer that
	// takes longer is disconnected.
	DefaultWriteTimeout = 5 * time.Second
	// DefaultMaxViewers bounds the viewers connected at once; past it
	// /live/events answers 503.
	DefaultMaxViewers = 100
	// DefaultSendBuffer is the socket send buffer of an event stream, which
	// the kernel would otherwise grow to megabytes for a viewer that stops
	// reading: with it, a stalled viewer's writes block once about this much
	// (doubled by Linux) and its own receive window are full, and the viewer
	// is dropped.
	DefaultSendBuffer = 32 << 10
	// retryAfterFull is what a viewer refused for the cap is told to wait.
	retryAfterFull = 10 * time.Second
)

// connKey is the request context's key for the connection (ConnContext).
type connKey struct{}

// ConnContext is an http.Server ConnContext hook: it records the connection
// so that the event stream can bound its send buffer (SendBuffer). Without
// it the kernel's default buffer applies.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// setSendBuffer bounds the send buffer of r's TCP connection, when
// ConnContext recorded it.
func setSendBuffer(r *http.Request, n int) {
	c, _ := r.Context().Value(connKey{}).(net.Conn)
	for c != nil {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetWriteBuffer(n)
			return
		}
		inner, ok := c.(interface{ NetConn() net.Conn }) // *tls.Conn
		if !ok {
			return
		}
		c = inner.NetConn()
	}
}

// keepAlive is how often an idle stream gets a comment, so proxies and the
// browser see it alive even when no tick comes (a hub that is shutting down).
const keepAlive = 15 * time.Second

//go:embed assets
var assets embed.FS

// Handler serves the page and its events under /live:
//
//	GET /live            the page
//	GET /live/events     the event stream (text/event-stream)
//	GET /live/<asset>    live.js, live.css
//
// Mount it at /live, outside any per-request timeout: the event stream lasts
// as long as the viewer stays.
func (h *Hub) Handler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.StripPrefix("/live/", http.FileServerFS(sub))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /live/events", h.serveEvents)
	mux.HandleFunc("GET /live", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, sub, "index.html")
	})
	mux.Handle("GET /live/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/live/" {
			http.Redirect(w, r, "/live", http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
	return mux
}

// serveEvents streams the hub's events to one viewer until it goes away or the
// hub drops it.
func (h *Hub) serveEvents(w http.ResponseWriter, r *http.Request) {
	if h.ctx == nil || h.ctx.Err() != nil {
		http.Error(w, "the live page is not running", http.StatusServiceUnavailable)
		return
	}
	rc := http.NewResponseController(w)
	// The server's read deadline would end the stream with the request's context.
	_ = rc.SetReadDeadline(time.Time{})
	v, err := h.join(lastEventID(r), func() { _ = rc.SetWriteDeadline(time.Now()) })
	if errors.Is(err, errFull) {
		w.Header().Set("Retry-After", strconv.Itoa(int(retryAfterFull.Seconds())))
		http.Error(w, fmt.Sprintf("the live page has %d viewers, the most this api serves (API_LIVE_MAX_VIEWERS); "+
			"retry in %s, or close another tab", h.MaxViewers, retryAfterFull), http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		http.Error(w, "encode events: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer h.leave(v)
	setSendBuffer(r, h.SendBuffer)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no") // nginx: pass events through at once
	w.WriteHeader(http.StatusOK)
	// The browser waits this long before reconnecting after a drop.
	if !h.send(w, rc, []byte("retry: 1000\n\n")) {
		return
	}
	ping := time.NewTicker(keepAlive)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-v.gone:
			return
		case <-ping.C:
			if !h.send(w, rc, []byte(": keep-alive\n\n")) {
				return
			}
		case frame := <-v.frames:
			if !h.send(w, rc, frame) {
				return
			}
		}
	}
}

// send writes one frame within WriteTimeout; a viewer the hub dropped
// meanwhile has its deadline moved to now (viewer.cut), which ends a write
// blocked on a full socket.
func (h *Hub) send(w http.ResponseWriter, rc *http.ResponseController, frame []byte) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(h.WriteTimeout))
	n, err := w.Write(frame)
	h.sent.Add(uint64(n))
	if err != nil {
		return false
	}
	return rc.Flush() == nil
}

// lastEventID is the last tick a reconnecting browser saw (its Last-Event-ID
// header), 0 when none.
func lastEventID(r *http.Request) uint64 {
	n, err := strconv.ParseUint(r.Header.Get("Last-Event-ID"), 10, 64)
	if err != nil {
		return 0
	}
	return n
}
