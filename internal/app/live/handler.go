package live

import (
	"embed"
	"io/fs"
	"net/http"
	"time"
)

// DefaultWriteTimeout bounds writing one event to a viewer; a viewer that
// takes longer is disconnected.
const DefaultWriteTimeout = 10 * time.Second

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
	v, err := h.join()
	if err != nil {
		http.Error(w, "encode events: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer h.leave(v)
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

func (h *Hub) send(w http.ResponseWriter, rc *http.ResponseController, frame []byte) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(h.WriteTimeout))
	if _, err := w.Write(frame); err != nil {
		return false
	}
	return rc.Flush() == nil
}
