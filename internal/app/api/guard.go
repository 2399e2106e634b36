package api

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/netip"
	"strings"
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

// browserHost refuses requests a browser sends to a host name the api does not
// know (DNS rebinding): a page of another site whose name an attacker points
// at the api's address is, to the browser, of the same origin as the api, so
// its Origin matches the Host and crossOrigin lets its writes through, and it
// could read the api's answers from a network the attacker cannot reach. A
// browser marks its requests with Origin or Sec-Fetch-*; those must name the
// api by an IP address, localhost, or one of AllowedHosts. Requests of other
// clients (curl, the benchmark, services) pass whatever their Host.
func (s *Server) browserHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fromBrowser(r) && !s.hostAllowed(r.Host) {
			s.writeError(w, r, requestErrorf(errForbidden,
				"a browser reached the api as %q, a name it does not answer browsers by (a page of another site may be pointing that name at it); "+
					"open it by IP address or localhost, or list the name in API_ALLOWED_HOSTS", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func fromBrowser(r *http.Request) bool {
	h := r.Header
	return h.Get("Origin") != "" || h.Get("Sec-Fetch-Site") != "" || h.Get("Sec-Fetch-Mode") != ""
}

// hostAllowed reports whether a browser may reach the api by host (a Host
// header, with or without a port).
func (s *Server) hostAllowed(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	for _, a := range s.AllowedHosts {
		if strings.EqualFold(strings.TrimSuffix(a, "."), host) {
			return true
		}
	}
	return false
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
