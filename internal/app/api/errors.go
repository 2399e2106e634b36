package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/app/ranking"
)

// Kinds of request errors of this package.
var (
	errBadRequest       = errors.New("bad request")
	errTooLarge         = errors.New("request body too large")
	errNotFound         = errors.New("not found")
	errMethodNotAllowed = errors.New("method not allowed")
	errMediaType        = errors.New("unsupported media type")
	errUnauthorized     = errors.New("unauthorized")
	errForbidden        = errors.New("forbidden")
	errSlowBody         = errors.New("request body timeout")
)

// requestError is a problem with the request itself; its message is the whole
// answer, its kind decides the status.
type requestError struct {
	kind error
	msg  string
}

func (e *requestError) Error() string { return e.msg }
func (e *requestError) Unwrap() error { return e.kind }

func requestErrorf(kind error, format string, args ...any) error {
	return &requestError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// StatusClientClosedRequest answers a request whose client went away (nginx's
// convention); nobody reads it, but the log shows it for what it is.
const StatusClientClosedRequest = 499

// statusOf is the one place where errors become HTTP statuses.
func statusOf(err error) int {
	switch {
	case errors.Is(err, errBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, errTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, errNotFound):
		return http.StatusNotFound
	case errors.Is(err, errMethodNotAllowed):
		return http.StatusMethodNotAllowed
	case errors.Is(err, errMediaType):
		return http.StatusUnsupportedMediaType
	case errors.Is(err, errUnauthorized):
		return http.StatusUnauthorized
	case errors.Is(err, errForbidden):
		return http.StatusForbidden
	case errors.Is(err, errSlowBody):
		return http.StatusRequestTimeout
	case errors.Is(err, orders.ErrInvalid), errors.Is(err, orders.ErrUnknownProduct), errors.Is(err, ranking.ErrAhead):
		return http.StatusUnprocessableEntity
	case errors.Is(err, orders.ErrNoProducts):
		return http.StatusConflict
	case errors.Is(err, orders.ErrUnavailable), errors.Is(err, ranking.ErrUnavailable):
		return http.StatusServiceUnavailable
	case errors.Is(err, ranking.ErrTimeout):
		return http.StatusGatewayTimeout
	case errors.Is(err, ranking.ErrBadAnswer):
		return http.StatusBadGateway
	case errors.Is(err, context.Canceled):
		return StatusClientClosedRequest
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError // including orders.ErrSchema
	}
}

type errorBody struct {
	Error string `json:"error"`
}

// writeError answers err as JSON. The messages of known errors are written for the
// client; an unexpected error's is kept for the log, and the client gets the
// request id to quote. A 503 says when to retry.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	msg := err.Error()
	if status == http.StatusInternalServerError && !errors.Is(err, orders.ErrSchema) {
		msg = "internal error: see the api's log for request " + middleware.GetReqID(r.Context())
	}
	if status >= 500 {
		noteError(r, err)
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, errorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal error: cannot encode the answer"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
