package engine

import (
	"errors"
	"fmt"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// Sentinel errors; match with errors.Is.
var (
	// ErrNotReady: the query reads a dataset or view that has not loaded yet.
	ErrNotReady = errors.New("not ready")
	// ErrPositionTimeout: the requested minimum position was not reached in time.
	ErrPositionTimeout = errors.New("position not reached")
	// ErrUnknownDataset: no dataset or view of that name.
	ErrUnknownDataset = errors.New("unknown dataset")
	// ErrNotAccelerated: an operation that needs acceleration on a dataset without.
	ErrNotAccelerated = errors.New("dataset is not accelerated")
	// ErrClosed: the engine is shutting down.
	ErrClosed = errors.New("runtime is shutting down")
	// ErrResultTooLarge: a result (or the memory a query needs) crossed the
	// runtime's limit. HTTP 413, gRPC ResourceExhausted.
	ErrResultTooLarge = errors.New("query result too large")
	// ErrQueryTooLarge: the query text is longer than MaxQueryBytes. HTTP 413,
	// gRPC ResourceExhausted.
	ErrQueryTooLarge = errors.New("query text too large")
	// ErrQueryTimeout: a query did not finish within QueryTimeout of its arrival.
	// HTTP 504, gRPC DeadlineExceeded.
	ErrQueryTimeout = errors.New("query timed out")
	// ErrBusy: every query slot is taken and the queue is full or the wait ran
	// out. HTTP 503 with Retry-After, gRPC Unavailable.
	ErrBusy = errors.New("runtime is busy")
	// ErrInvalidOverride: refresh overrides the dataset cannot take (see
	// RefreshWith). HTTP 400.
	ErrInvalidOverride = errors.New("invalid refresh override")
)

// NotReadyError says which dataset a query waits for and why.
type NotReadyError struct {
	Dataset string
	State   State
	Cause   error // the last load error, if any
}

func (e *NotReadyError) Error() string {
	msg := fmt.Sprintf("dataset %s is not ready (%s): its first load has not finished", e.Dataset, e.State)
	if e.Cause != nil {
		msg += fmt.Sprintf("; last error: %v", e.Cause)
	}
	return msg + "; retry shortly, watch GET /v1/datasets?status=true, or set ready_state: on_registration to read the source meanwhile"
}

func (e *NotReadyError) Unwrap() error { return ErrNotReady }

// PositionError says which position was asked for and what the data reflects.
type PositionError struct {
	Want, Have position.LSN
	Dataset    string // the input that lags
	Waited     string
}

func (e *PositionError) Error() string {
	return fmt.Sprintf("position %s not reached after %s: dataset %s reflects %s; the source may be unreachable or lagging (see GET /v1/datasets?status=true), retry or relax %s",
		e.Want, e.Waited, e.Dataset, e.Have, wire.HeaderMinPosition)
}

func (e *PositionError) Unwrap() error { return ErrPositionTimeout }
