package ranking

import (
	"context"
	"sync"
	"time"
)

// coalescer lets concurrent reads of the same Request share calls to the
// runtime. One call per Request is in flight at a time. Reads that arrive
// while it runs do not join it (it may have started before a write they must
// see); they gather for the next call, which starts when the current one ends
// and answers all of them. So every answer comes from a call that started after
// its read arrived: as fresh as a call of its own, while a hundred concurrent
// reads cost the runtime a few calls instead of a hundred. (Ours, not
// x/sync/singleflight's: a read joining the call in flight could miss its write.)
type coalescer struct {
	mu    sync.Mutex
	slots map[Request]*slot
}

// slot is the state of one Request: whether a call runs, and the call that the
// reads arriving meanwhile wait for.
type slot struct {
	next *call
}

// call is one shared call; done is closed once res and err are set.
type call struct {
	done    chan struct{}
	waiters int // under the coalescer's lock
	res     Result
	err     error
}

// do answers req with fn, or with the next call of req's slot when a call is in
// flight. fn's context: the caller's when it runs its own call, else one without
// cancellation (the call answers every read waiting for it); fn bounds it.
// wait is the error of a read that stops waiting because its ctx ended.
func (c *coalescer) do(ctx context.Context, req Request, fn func(context.Context) (Result, error), wait func(ctx context.Context, err error) error, timeout time.Duration) (Result, error) {
	c.mu.Lock()
	if c.slots == nil {
		c.slots = map[Request]*slot{}
	}
	s, running := c.slots[req]
	if !running {
		// Nothing in flight: this read makes its own call, at once.
		s = &slot{}
		c.slots[req] = s
		c.mu.Unlock()
		res, err := fn(ctx)
		c.finished(req, s, fn)
		return res, err
	}
	cl := s.next
	if cl == nil {
		cl = &call{done: make(chan struct{})}
		s.next = cl
	}
	cl.waiters++
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case <-cl.done:
		return cl.res, cl.err
	case <-ctx.Done():
		return Result{}, wait(ctx, ctx.Err())
	}
}

// finished ends a call of req's slot: the reads that gathered meanwhile get
// the next call, run in the background; without any, the slot is dropped.
func (c *coalescer) finished(req Request, s *slot, fn func(context.Context) (Result, error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := s.next
	if cl == nil {
		delete(c.slots, req)
		return
	}
	s.next = nil
	go func() {
		cl.res, cl.err = fn(context.Background())
		close(cl.done)
		c.finished(req, s, fn)
	}()
}

// waiting returns how many reads of req wait for its next call.
func (c *coalescer) waiting(req Request) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.slots[req]; s != nil && s.next != nil {
		return s.next.waiters
	}
	return 0
}
