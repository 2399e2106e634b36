package flightsrv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// Sentinel errors; match with errors.Is.
var (
	// ErrInvalidRequest: the request itself is malformed (bad metadata, a handle
	// or ticket this server never issued, parameters it cannot bind). It maps to
	// InvalidArgument.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrExpired: a ticket or prepared statement handle is no longer held. It maps
	// to NotFound; the client repeats GetFlightInfo or prepares again.
	ErrExpired = errors.New("expired")
	// ErrShuttingDown: the server is closing. It maps to Unavailable.
	ErrShuttingDown = errors.New("flight server is shutting down")
	// ErrUnauthenticated: credentials that cannot be read. It maps to
	// Unauthenticated.
	ErrUnauthenticated = errors.New("authorization: Basic credentials must be base64 of user:password")
)

// invalidf returns an error wrapping ErrInvalidRequest.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidRequest, fmt.Sprintf(format, args...))
}

// toStatus is the one place where errors become gRPC status codes. Errors that
// already carry a status pass through. Unexpected errors become Internal and are
// logged here, once.
func toStatus(log *slog.Logger, method string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	var (
		notReady *engine.NotReadyError
		posErr   *engine.PositionError
		queryErr *engine.QueryError
	)
	switch {
	case errors.Is(err, engine.ErrResultTooLarge), errors.Is(err, engine.ErrQueryTooLarge),
		errors.Is(err, engine.ErrSubscriberTooSlow):
		return status.Error(codes.ResourceExhausted, err.Error())
	case errors.Is(err, engine.ErrResync):
		return status.Error(codes.Aborted, err.Error())
	case errors.Is(err, engine.ErrNotSubscribable):
		return status.Error(codes.Unimplemented, err.Error()+"; read it with a query instead")
	case errors.Is(err, engine.ErrQueryTimeout):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, engine.ErrBusy):
		return status.Error(codes.Unavailable, err.Error())
	case errors.As(err, &notReady):
		return status.Error(codes.Unavailable, notReady.Error())
	case errors.As(err, &posErr):
		return status.Error(codes.DeadlineExceeded, posErr.Error())
	case errors.Is(err, engine.ErrClosed), errors.Is(err, ErrShuttingDown),
		errors.Is(err, engine.ErrMaintenanceFailed): // the engine logged it
		return status.Error(codes.Unavailable, err.Error())
	case errors.As(err, &queryErr):
		return status.Error(codes.InvalidArgument, queryErr.Error())
	case errors.Is(err, ErrInvalidRequest):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, engine.ErrUnknownDataset), errors.Is(err, ErrExpired):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, ErrUnauthenticated):
		return status.Error(codes.Unauthenticated, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	log.Error("flight request failed", logMethod, method, logging.ErrorKey, err)
	return status.Error(codes.Internal, err.Error())
}
