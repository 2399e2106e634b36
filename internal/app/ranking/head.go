package ranking

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"golang.org/x/sync/singleflight"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// ErrAhead: a minimum position beyond the present position of the source of
// truth (Postgres). No write was acknowledged there, so no runtime will reach
// it in time: the request is refused at once.
var ErrAhead = errors.New("minimum position ahead of the source of truth")

// AheadError names the position asked for and Postgres's.
type AheadError struct {
	Want, Head position.LSN
}

func (e *AheadError) Error() string {
	return fmt.Sprintf("minimum position %s is ahead of postgres, which is at %s: send a %s this api returned",
		e.Want, e.Head, wire.HeaderPosition)
}

func (e *AheadError) Unwrap() error { return ErrAhead }

// reader is what HeadCheck wraps; *replicas.Pool implements it.
type reader interface {
	Ranking(ctx context.Context, req Request) (Result, error)
}

// HeadCheck refuses, before asking Reader, a minimum position that Postgres
// has not reached: a runtime would wait for it until its minimum-position
// timeout. It remembers the highest position it has seen Postgres or an
// answer at, and reads Postgres's present position (Head) only for a
// minimum position beyond that, one read at a time for all requests. When
// Head fails the request goes to Reader, whose wait is bounded anyway.
type HeadCheck struct {
	Reader reader
	// Head reads Postgres's present position (pg_current_wal_lsn()).
	Head func(ctx context.Context) (position.LSN, error)

	known atomic.Uint64
	reads singleflight.Group
}

// Ranking answers from Reader unless req.MinPosition is ahead of Postgres.
func (h *HeadCheck) Ranking(ctx context.Context, req Request) (Result, error) {
	if want := req.MinPosition; uint64(want) > h.known.Load() {
		head, err := h.head(ctx)
		if err == nil && want > head {
			return Result{}, &AheadError{Want: want, Head: head}
		}
	}
	res, err := h.Reader.Ranking(ctx, req)
	if err == nil {
		h.raise(res.Position)
	}
	return res, err
}

func (h *HeadCheck) head(ctx context.Context) (position.LSN, error) {
	v, err, _ := h.reads.Do("head", func() (any, error) { return h.Head(ctx) })
	if err != nil {
		return 0, err
	}
	head := v.(position.LSN)
	h.raise(head)
	return head, nil
}

func (h *HeadCheck) raise(p position.LSN) {
	for {
		old := h.known.Load()
		if uint64(p) <= old || h.known.CompareAndSwap(old, uint64(p)) {
			return
		}
	}
}
