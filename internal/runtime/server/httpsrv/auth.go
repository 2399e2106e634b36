package httpsrv

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

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

// throttlePort names the HTTP port in the wrong-key log.
const throttlePort = "http"

// authenticate refuses requests without a valid API key with 401, when the
// server has keys, and records the key's access for requireWrite. The key is
// read from X-API-Key, or from "Authorization: Bearer <key>". Without keys
// every request has read-write access. A client address that has sent too
// many wrong keys gets 429 with Retry-After before its key is checked
// (apikey.Throttle); /health and /v1/ready stay open to it.
func (s *Server) authenticate(next http.Handler) http.Handler {
	keys := apikey.New(s.APIKeys)
	if keys.Empty() {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, withAccess(r, apikey.ReadWrite))
		})
	}
	throttle := s.Throttle
	if throttle == nil {
		throttle = &apikey.Throttle{Logger: s.Logger}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if openPaths[r.URL.Path] {
			if a := keys.Access(requestKey(r)); a != apikey.None {
				r = withAccess(r, a)
			}
			next.ServeHTTP(w, r)
			return
		}
		key, now := requestKey(r), time.Now()
		if key != "" {
			if wait, ok := throttle.Allow(r.RemoteAddr, throttlePort, now); !ok {
				w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
				text(w, http.StatusTooManyRequests, fmt.Sprintf("too many wrong API keys from this address: try again in %d s "+
					"(after a burst of wrong keys an address gets one attempt a second; check the key the client sends)", int(math.Ceil(wait.Seconds()))))
				return
			}
		}
		if a := keys.Access(key); a != apikey.None {
			next.ServeHTTP(w, withAccess(r, a))
			return
		}
		if key != "" {
			throttle.Failed(r.RemoteAddr, throttlePort, now)
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
