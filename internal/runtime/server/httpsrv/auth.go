package httpsrv

import (
	"net/http"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
)

// HeaderAPIKey carries the API key, as upstream's HTTP API reads it.
const HeaderAPIKey = "X-API-Key"

// openPaths answer without a key, as upstream's: probes of orchestrators carry none.
var openPaths = map[string]bool{"/health": true, "/v1/ready": true}

// authenticate refuses requests without a valid API key with 401, when the
// server has keys. The key is read from X-API-Key, or from
// "Authorization: Bearer <key>".
func (s *Server) authenticate(next http.Handler) http.Handler {
	keys := apikey.New(s.APIKeys)
	if keys.Empty() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if openPaths[r.URL.Path] || keys.Valid(requestKey(r)) {
			next.ServeHTTP(w, r)
			return
		}
		msg := "missing API key: send one of the runtime's keys (runtime.auth.api-key.keys of its spicepod) in the X-API-Key header"
		if requestKey(r) != "" {
			msg = "invalid API key: the X-API-Key header holds none of the runtime's keys (runtime.auth.api-key.keys of its spicepod)"
		}
		w.Header().Set("WWW-Authenticate", `APIKey header="X-API-Key"`)
		text(w, http.StatusUnauthorized, msg)
	})
}

func requestKey(r *http.Request) string {
	if k := r.Header.Get(HeaderAPIKey); k != "" {
		return k
	}
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(cred)
	}
	return ""
}
