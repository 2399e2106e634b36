package replicas

import (
	"github.com/cqrs-spice/cqrs/internal/logging"

	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// Health of a replica as its grpc.health.v1 Watch reports it.
const (
	healthUnknown int32 = iota // no answer yet
	healthServing
	healthNotServing // NOT_SERVING, or the watch broke (replica gone)
)

// replica is one address of the service: its reader, its health and its record.
type replica struct {
	addr   string
	reader Reader
	conn   *grpc.ClientConn // health checks only
	cancel context.CancelFunc
	done   chan struct{}

	health   atomic.Int32
	position atomic.Uint64 // the highest position it answered at
	requests atomic.Uint64 // reads sent to it
	failures atomic.Uint64 // reads that failed before an answer

	mu           sync.Mutex
	streak       int       // reads failed in a row
	ejectedUntil time.Time // left out until then

	closeOnce sync.Once
	closeErr  error
}

func (p *Pool) newReplica(addr string) (*replica, error) {
	rd, err := p.open(addr)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(ranking.TransportCredentials(p.TLS)), ranking.ConnectParams())
	if err != nil {
		_ = rd.Close()
		return nil, fmt.Errorf("open health client for %s: %w", addr, err)
	}
	ctx, cancel := context.WithCancel(p.ctx)
	r := &replica{addr: addr, reader: rd, conn: conn, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		p.watch(ctx, r)
	}()
	return r, nil
}

// watch follows the replica's health until ctx ends. A replica that does not
// implement grpc.health.v1 counts as serving: the failure counts decide alone.
func (p *Pool) watch(ctx context.Context, r *replica) {
	hc := healthpb.NewHealthClient(r.conn)
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		began := time.Now()
		err := p.watchOnce(ctx, hc, r)
		if time.Since(began) > time.Second {
			wait = 100 * time.Millisecond // it watched for a while: a new failure, retried quickly
		}
		if status.Code(err) == codes.Unimplemented {
			r.setHealth(p, healthServing, "no grpc.health.v1; counting it as serving")
			<-ctx.Done()
			return
		}
		if ctx.Err() != nil {
			return
		}
		r.setHealth(p, healthNotServing, err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

func (p *Pool) watchOnce(ctx context.Context, hc healthpb.HealthClient, r *replica) error {
	w, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return err
	}
	for {
		resp, err := w.Recv()
		if err != nil {
			return err
		}
		if resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			r.setHealth(p, healthServing, "SERVING")
		} else {
			r.setHealth(p, healthNotServing, resp.GetStatus().String())
		}
	}
}

func (r *replica) setHealth(p *Pool, h int32, why string) {
	if r.health.Swap(h) == h {
		return
	}
	if h == healthServing {
		p.Logger.Info("replica healthy", "service", p.name, "addr", r.addr)
	} else {
		p.Logger.Warn("replica unhealthy: no new reads", "service", p.name, "addr", r.addr, "why", why)
	}
}

// usable reports whether new reads may go to the replica.
func (r *replica) usable(now time.Time) bool {
	if r.health.Load() != healthServing {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return !now.Before(r.ejectedUntil)
}

// succeeded records an answer at pos.
func (r *replica) succeeded(pos position.LSN) {
	for {
		old := r.position.Load()
		if uint64(pos) <= old || r.position.CompareAndSwap(old, uint64(pos)) {
			break
		}
	}
	r.mu.Lock()
	r.streak = 0
	r.mu.Unlock()
}

// failed records a read that got no answer and reports whether that ejected
// the replica.
func (r *replica) failed(p *Pool, now time.Time, err error) {
	r.failures.Add(1)
	r.mu.Lock()
	r.streak++
	eject := r.streak >= p.EjectAfter && !now.Before(r.ejectedUntil)
	if eject {
		r.ejectedUntil = now.Add(p.EjectFor)
		r.streak = 0
	}
	r.mu.Unlock()
	if eject {
		p.Logger.Warn("replica ejected: failed reads in a row", "service", p.name, "addr", r.addr,
			"failures", p.EjectAfter, "for", p.EjectFor, logging.ErrorKey, err)
	}
}

// stopWatch ends the health watch.
func (r *replica) stopWatch() {
	r.cancel()
	<-r.done
}

func (r *replica) close() error {
	r.closeOnce.Do(func() {
		r.stopWatch()
		r.conn.Close()
		r.closeErr = r.reader.Close()
	})
	return r.closeErr
}
