package api

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
	"sync"
	"time"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// Request log attribute keys.
const (
	logMethod    = "method"
	logPath      = "path"
	logStatus    = "status"
	logDuration  = "duration"
	logBytes     = "bytes"
	logClient    = "client"
	logRequestID = "request_id"
	logError     = logging.ErrorKey
	// logSkipped counts the like answers left out of the log since the line
	// before.
	logSkipped = "skipped"
)

// dependencyLogInterval is the least time between two lines about the same
// path and dependency status (502, 503, 504).
const dependencyLogInterval = 10 * time.Second

// lineLimiter lets one log line through per key and interval and counts the
// rest. It remembers at most maxKeys keys (the api's paths are few).
type lineLimiter struct {
	mu   sync.Mutex
	keys map[lineKey]*lineState
}

type lineKey struct {
	path   string
	status int
}

type lineState struct {
	last    time.Time
	skipped int
}

const maxKeys = 256

// allow reports whether a line about path and status may be written at now,
// and how many were left out before it.
func (l *lineLimiter) allow(path string, status int, now time.Time) (skipped int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := lineKey{path, status}
	st := l.keys[k]
	if st == nil {
		if l.keys == nil || len(l.keys) >= maxKeys {
			l.keys = map[lineKey]*lineState{}
		}
		st = &lineState{}
		l.keys[k] = st
	}
	if !st.last.IsZero() && now.Sub(st.last) < dependencyLogInterval {
		st.skipped++
		return 0, false
	}
	skipped, st.last, st.skipped = st.skipped, now, 0
	return skipped, true
}

// logEntry carries what a handler wants in the request's log line: the error
// behind a 5xx answer.
type logEntry struct{ err error }

type logEntryKey struct{}

func clientIPMiddleware(prefixes []string) (func(http.Handler) http.Handler, error) {
	for _, p := range prefixes {
		if _, err := netip.ParsePrefix(p); err != nil {
			return nil, fmt.Errorf("trusted proxy %q is not a CIDR prefix like 10.0.0.0/8: %w", p, err)
		}
	}
	if len(prefixes) == 0 {
		return middleware.ClientIPFromRemoteAddr, nil
	}
	return middleware.ClientIPFromXFF(prefixes...), nil
}

// logRequests writes one line per request: 500 at error level with the error
// behind it; 502, 503 and 504, which say a dependency failed or was slow, at
// warn level and at most one line per path and status every
// dependencyLogInterval, counting the ones left out (anyone can cause them, by
// reading while a runtime is down); everything else at debug, which load
// tests leave switched off. clientIP (clientIPMiddleware's) names the client
// in the line; it runs only for a request that is logged.
func (s *Server) logRequests(clientIP func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler { return s.logRequestsTo(next, clientIP) }
}

func (s *Server) logRequestsTo(next http.Handler, clientIP func(http.Handler) http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx := r.Context()
		w.Header().Set(wire.HeaderRequestID, middleware.GetReqID(ctx))
		entry := &logEntry{}
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r.WithContext(context.WithValue(ctx, logEntryKey{}, entry)))

		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		level := slog.LevelDebug
		var skipped int
		switch {
		case status >= 502 && status <= 504:
			level = slog.LevelWarn
			var ok bool
			if skipped, ok = s.depLog.allow(r.URL.Path, status, start); !ok {
				return
			}
		case status >= 500:
			level = slog.LevelError
		}
		log := s.logger()
		if !log.Enabled(ctx, level) {
			return
		}
		attrs := []slog.Attr{
			slog.String(logMethod, r.Method),
			slog.String(logPath, r.URL.Path),
			slog.Int(logStatus, status),
			slog.Duration(logDuration, time.Since(start)),
			slog.Int(logBytes, ww.BytesWritten()),
			slog.String(logClient, clientOf(r, clientIP)),
			slog.String(logRequestID, middleware.GetReqID(ctx)),
		}
		if entry.err != nil {
			attrs = append(attrs, slog.String(logError, entry.err.Error()))
		}
		if skipped > 0 {
			attrs = append(attrs, slog.Int(logSkipped, skipped))
		}
		log.LogAttrs(ctx, level, "request", attrs...)
	})
}

// clientOf is the client's address: from X-Forwarded-For when a trusted proxy
// sent the request (as clientIP finds it), else the peer's.
func clientOf(r *http.Request, clientIP func(http.Handler) http.Handler) string {
	var ip string
	clientIP(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		ip = middleware.GetClientIP(r.Context())
	})).ServeHTTP(nil, r)
	if ip != "" {
		return ip
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// noteError puts err in the request's log line.
func noteError(r *http.Request, err error) {
	if e, ok := r.Context().Value(logEntryKey{}).(*logEntry); ok {
		e.err = err
	}
}

// recoverPanics turns a panic into a JSON 500 and logs it with its stack. An
// aborted handler (http.ErrAbortHandler) keeps aborting.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			rec := recover()
			if rec == nil {
				return
			}
			if rec == http.ErrAbortHandler {
				panic(rec)
			}
			s.writeError(w, r, fmt.Errorf("panic: %v\n%s", rec, debug.Stack()))
		}()
		next.ServeHTTP(w, r)
	})
}

// timeout bounds each request: the handlers pass the deadline on to Postgres and
// the runtimes, whose errors then say what timed out.
func (s *Server) timeout(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), s.requestTimeout())
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
