package replicas

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// Ranking reads from one replica, trying up to MaxAttempts replicas while they
// fail before answering (ranking.ErrUnavailable). Other errors are returned at
// once: a timeout may have run long already, and a bad answer is the same on
// every replica. Errors are *ranking.SourceError, or the caller's cancellation.
func (p *Pool) Ranking(ctx context.Context, req ranking.Request) (ranking.Result, error) {
	var res ranking.Result
	err := p.do(ctx, req.MinPosition, func(ctx context.Context, r *replica) error {
		var err error
		res, err = r.reader.Ranking(ctx, req)
		if err == nil {
			r.succeeded(res.Position)
		}
		return err
	})
	return res, err
}

// Ping succeeds when one replica answers the query (see ranking.Flight.Ping).
func (p *Pool) Ping(ctx context.Context) error {
	return p.do(ctx, 0, func(ctx context.Context, r *replica) error {
		err := r.reader.Ping(ctx)
		if err == nil {
			r.succeeded(0)
		}
		return err
	})
}

func (p *Pool) do(ctx context.Context, minPos position.LSN, read func(context.Context, *replica) error) error {
	p.awaitFirst(ctx)
	order, err := p.pick(minPos)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range order[:min(len(order), p.MaxAttempts)] {
		r.requests.Add(1)
		err := read(ctx, r)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || !errors.Is(err, ranking.ErrUnavailable) {
			return err
		}
		r.failed(p, time.Now(), err)
		errs = append(errs, err)
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return &ranking.SourceError{Source: p.name, Addr: p.target, Kind: ranking.ErrUnavailable,
		Detail: fmt.Sprintf("%d replicas failed in turn; the last: %v", len(errs), errs[len(errs)-1]),
		Err:    errors.Join(errs...)}
}

// awaitFirst holds a read that arrives before the first resolution has
// finished until it has, or until ctx ends: a fresh api's first reads go to the
// replicas instead of failing for want of any. The wait is bounded by the
// resolution's own timeout, max(ResolveInterval, 1 s).
func (p *Pool) awaitFirst(ctx context.Context) {
	select {
	case <-p.first:
		return
	default:
	}
	p.waiting.Add(1)
	defer p.waiting.Add(-1)
	select {
	case <-p.first:
	case <-ctx.Done():
	}
}

// pick orders the replicas for one read: usable ones first, in turn (round
// robin), those already at minPos before the others; then the rest, in case
// their health is stale (a read tried on them is better than none).
func (p *Pool) pick(minPos position.LSN) ([]*replica, error) {
	p.mu.Lock()
	all := slices.Clone(p.replicas)
	resolved, lastErr := p.resolved, p.lastErr
	p.mu.Unlock()
	if len(all) == 0 {
		detail := "no replica resolved yet"
		if resolved || lastErr != nil {
			detail = fmt.Sprintf("no replica found for %s", p.target)
		}
		if lastErr != nil {
			detail += fmt.Sprintf(" (%v)", lastErr)
		}
		detail += "; check that the service runs (docker-compose ps) and that the api can resolve its name"
		return nil, &ranking.SourceError{Source: p.name, Addr: p.target, Kind: ranking.ErrUnavailable, Detail: detail}
	}
	n := len(all)
	start := int(p.next.Add(1) % uint64(n))
	now := time.Now()
	var ahead, behind, rest []*replica
	for i := range n {
		r := all[(start+i)%n]
		switch {
		case !r.usable(now):
			rest = append(rest, r)
		case minPos.IsZero() || position.LSN(r.position.Load()) >= minPos:
			ahead = append(ahead, r)
		default:
			behind = append(behind, r)
		}
	}
	return append(append(ahead, behind...), rest...), nil
}

// Status is one replica as the pool sees it.
type Status struct {
	Addr     string
	Healthy  bool         // grpc.health.v1 says SERVING
	Ejected  bool         // left out after failures in a row
	Position position.LSN // the highest position it answered at
	Requests uint64       // reads sent to it
	Failures uint64       // of which failed before an answer
}

// Replicas returns the replicas known now, in address order.
func (p *Pool) Replicas() []Status {
	p.mu.Lock()
	all := slices.Clone(p.replicas)
	p.mu.Unlock()
	now := time.Now()
	out := make([]Status, len(all))
	for i, r := range all {
		r.mu.Lock()
		ejected := now.Before(r.ejectedUntil)
		r.mu.Unlock()
		out[i] = Status{Addr: r.addr, Healthy: r.health.Load() == healthServing, Ejected: ejected,
			Position: position.LSN(r.position.Load()), Requests: r.requests.Load(), Failures: r.failures.Load()}
	}
	return out
}
