package wire

import "strings"

// HTTP header names.
const (
	// HeaderPosition is set on every answer: the position the answer reflects. On
	// a write, it is the commit position of that write (the read-your-writes
	// token).
	HeaderPosition = "Spice-Position"
	// HeaderMinPosition is sent by a reader that wants an answer reflecting at
	// least this position; the server waits a bounded time for it, then fails
	// clearly.
	HeaderMinPosition = "Spice-Min-Position"
	// HeaderCacheStatus reports whether an answer came from a runtime's results
	// cache: CacheHit, CacheMiss or CacheBypass (upstream's header).
	HeaderCacheStatus = "Results-Cache-Status"
	// HeaderXCache is upstream's older spelling of the cache status, in its own
	// words ("Hit from spiceai"); the runtime's HTTP API sets it too.
	HeaderXCache = "X-Cache"
	// HeaderCacheControl with NoCache in its value asks a reader to bypass the
	// results cache.
	HeaderCacheControl = "Cache-Control"
	// HeaderRequestID carries a request's id: the api echoes it on every answer
	// so that a client can quote it.
	HeaderRequestID = "X-Request-Id"
)

// gRPC metadata keys of Flight calls: the header names above in lower case, as
// gRPC requires.
const (
	MetadataPosition     = "spice-position"
	MetadataMinPosition  = "spice-min-position"
	MetadataCacheStatus  = "results-cache-status"
	MetadataCacheControl = "cache-control"
	// MetadataAuthorization carries "Bearer <token>" after a Flight handshake
	// (and "Basic ..." during one).
	MetadataAuthorization = "authorization"
)

// Values of HeaderCacheStatus and MetadataCacheStatus.
const (
	CacheHit    = "HIT"
	CacheMiss   = "MISS"
	CacheBypass = "BYPASS"
)

// NoCache is the Cache-Control directive that bypasses the results cache.
const NoCache = "no-cache"

// WantsNoCache reports whether any of the Cache-Control values (a header's or a
// metadata key's) carries the no-cache directive, in any case.
func WantsNoCache(values ...string) bool {
	for _, v := range values {
		if strings.Contains(strings.ToLower(v), NoCache) {
			return true
		}
	}
	return false
}
