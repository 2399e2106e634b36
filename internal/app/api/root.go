package api

import (
	"mime"
	"net/http"
	"strings"
)

// rootText is what GET / answers a client that is not a browser.
const rootText = `cqrs api: orders go to Postgres, the ranking is read three ways.
  POST /orders                  write an order (no body: a random one)
  GET  /ranking                 the top 5 from Postgres
  GET  /ranking-accelerated     from the accelerated runtime
  GET  /ranking-materialized    from the materialized runtime
  GET  /readyz                  whether every dependency answers
`

// handleRoot sends a browser to the live page and anybody else the list of
// endpoints: curl sends Accept: */*, a browser asks for text/html by name.
func (s *Server) handleRoot(w http.ResponseWriter, r *http.Request) {
	if s.Live != nil && wantsHTML(r) {
		http.Redirect(w, r, "/live", http.StatusSeeOther)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Vary", "Accept")
	text := rootText
	if s.Live != nil {
		text += "  GET  /live                    the live page, in a browser\n"
	}
	_, _ = w.Write([]byte(text))
}

// wantsHTML reports whether the Accept header names text/html.
func wantsHTML(r *http.Request) bool {
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(part); err == nil && mt == "text/html" {
			return true
		}
	}
	return false
}
