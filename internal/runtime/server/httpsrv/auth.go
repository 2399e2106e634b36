package httpsrv

import (
	"context"
	"net/http"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
)

// HeaderAPIKey carries the API key, as upstream's HTTP API reads it.
const HeaderAPIKey = "X-API-Key"

// openPaths answer without a key, as upstream's: probes of orchestrators carry none.
var openPaths = map[string]bool{"/health": true, "/v1/ready": true}

const msgReadOnly = "this API key is read-only: a refresh changes the runtime's data and needs a read-write key; " +
	"list one in runtime.auth.api-key.keys of the runtime's spicepod with the :rw suffix (e.g. ${env:ADMIN_KEY}:rw) and send that"

// accessKey is the request context's key for the caller's apikey.Access.
type accessKey struct{}

// authenticate refuses requests without a valid API key with 401, when the
// server has keys, and records the key's access for requireWrite. The key is
// read from X-API-Key, or from "Authorization: Bearer <key>". Without keys
// every request has read-write access.
func (s *Server) authenticate(next http.Handler) http.Handler {
	keys := apikey.New(s.APIKeys)
	if keys.Empty() {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, withAccess(r, apikey.ReadWrite))
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := keys.Access(requestKey(r)); a != apikey.None {
			next.ServeHTTP(w, withAccess(r, a))
			return
		}
		if openPaths[r.URL.Path] {
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

func withAccess(r *http.Request, a apikey.Access) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), accessKey{}, a))
}

// requireWrite answers 403 to a request whose key is read-only: it guards the
// routes that change the runtime's state.
func requireWrite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a, _ := r.Context().Value(accessKey{}).(apikey.Access); !a.CanWrite() {
			text(w, http.StatusForbidden, msgReadOnly)
			return
		}
		next.ServeHTTP(w, r)
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
