package api

import (
	"crypto/subtle"
	"net/http"
)

// HeaderAPIKey carries the write key of POST /orders when WriteKey is set.
const HeaderAPIKey = "X-API-Key"

// crossOrigin refuses writes a browser sends on behalf of another site
// (Sec-Fetch-Site: cross-site, or an Origin other than the Host): the api
// listens on every interface, so without this any page a visitor opens could
// post orders with a form or fetch in no-cors mode. Clients that are not
// browsers send neither header and pass; GET, HEAD and OPTIONS always pass.
func (s *Server) crossOrigin() func(http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, requestErrorf(errForbidden,
			"cross-origin %s %s refused: a page of another site may not write to this api; call it from a server or the command line",
			r.Method, r.URL.Path))
	}))
	return cop.Handler
}

// requireWriteKey answers 401 unless the request carries WriteKey in
// X-API-Key; it passes everything when WriteKey is empty.
func (s *Server) requireWriteKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.WriteKey != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get(HeaderAPIKey)), []byte(s.WriteKey)) != 1 {
			s.writeError(w, r, requestErrorf(errUnauthorized,
				"%s %s needs the header %s holding the api's API_WRITE_KEY", r.Method, r.URL.Path, HeaderAPIKey))
			return
		}
		next.ServeHTTP(w, r)
	})
}
