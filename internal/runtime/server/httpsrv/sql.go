package httpsrv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// sql answers POST /v1/sql: the body is one SELECT.
func (s *Server) sql(w http.ResponseWriter, r *http.Request) {
	limit := s.MaxQueryBytes
	if limit <= 0 {
		limit = DefaultMaxQueryBytes
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		text(w, http.StatusBadRequest, "read request body: "+err.Error()+"; send the whole query promptly")
		return
	}
	if len(body) > limit {
		text(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("query text larger than %d bytes; send a shorter query", limit))
		return
	}
	query := strings.TrimSpace(string(body))
	if query == "" {
		text(w, http.StatusBadRequest, "empty query: send one SELECT statement as the request body")
		return
	}
	q := engine.Query{SQL: query}
	if v := r.Header.Get(wire.HeaderMinPosition); v != "" {
		if q.MinPosition, err = position.Parse(v); err != nil {
			text(w, http.StatusBadRequest, wire.HeaderMinPosition+": "+err.Error())
			return
		}
	}
	if wire.WantsNoCache(r.Header.Values(wire.HeaderCacheControl)...) {
		q.NoCache = true
	}
	res, err := s.engine.Query(r.Context(), q)
	if err != nil {
		s.queryError(w, r, err)
		return
	}
	defer res.Release()
	h := w.Header()
	h.Set(wire.HeaderPosition, res.Position.String())
	h.Set(wire.HeaderCacheStatus, string(res.Cache))
	h.Set(wire.HeaderXCache, cacheHeader(res.Cache))
	format := negotiate(r.Header.Get("Accept"))
	h.Set("Content-Type", format.contentType)
	w.WriteHeader(http.StatusOK)
	if err := format.write(w, res); err != nil {
		s.Logger.Warn("write query result", logging.ErrorKey, err)
	}
}

func cacheHeader(c engine.CacheStatus) string {
	switch c {
	case engine.CacheHit:
		return "Hit from spiceai"
	case engine.CacheMiss:
		return "Miss from spiceai"
	default:
		return "Bypass"
	}
}

// statusClientClosed answers a request whose client went away (nginx's 499);
// nobody reads it.
const statusClientClosed = 499

// statusOf maps an engine error to an HTTP status: the one place that does.
func statusOf(err error) int {
	var qe *engine.QueryError
	switch {
	case errors.Is(err, context.Canceled):
		return statusClientClosed
	case errors.Is(err, engine.ErrResultTooLarge), errors.Is(err, engine.ErrQueryTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, engine.ErrQueryTimeout):
		return http.StatusGatewayTimeout
	case errors.Is(err, engine.ErrBusy):
		return http.StatusServiceUnavailable
	case errors.As(err, &qe):
		return http.StatusBadRequest
	case errors.Is(err, engine.ErrNotReady), errors.Is(err, engine.ErrClosed):
		return http.StatusServiceUnavailable
	case errors.Is(err, engine.ErrPositionTimeout), errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	case errors.Is(err, engine.ErrUnknownDataset):
		return http.StatusNotFound
	case errors.Is(err, engine.ErrNotAccelerated):
		return http.StatusBadRequest
	default:
		return http.StatusInternalServerError
	}
}

func (s *Server) queryError(w http.ResponseWriter, r *http.Request, err error) {
	code := statusOf(err)
	if code >= 500 && code != http.StatusServiceUnavailable && code != http.StatusGatewayTimeout {
		s.Logger.Error("query failed", "path", r.URL.Path, logging.ErrorKey, err)
	}
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	if code == statusClientClosed {
		w.WriteHeader(code)
		return
	}
	text(w, code, err.Error())
}
