package api

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime/debug"
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
)

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

// logRequests writes one line per request: 5xx at error level with the error
// behind it, everything else at debug, which load tests leave switched off.
// clientIP (clientIPMiddleware's) names the client in the line; it runs only
// for a request that is logged.
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
		if status >= 500 {
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
