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
