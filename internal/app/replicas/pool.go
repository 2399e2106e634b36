package replicas

import (
	"github.com/cqrs-spice/cqrs/internal/logging"

	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqrs-spice/cqrs/internal/app/ranking"
)

// Defaults of Pool's tunables.
const (
	// DefaultResolveInterval is how often the service name is resolved again, so
	// that added replicas get reads and removed ones stop being dialled.
	DefaultResolveInterval = time.Second
	// DefaultMaxAttempts bounds the replicas one read tries.
	DefaultMaxAttempts = 3
	// DefaultEjectAfter is how many reads in a row a replica may fail before it
	// is left out.
	DefaultEjectAfter = 3
	// DefaultEjectFor is how long an ejected replica is left out.
	DefaultEjectFor = 5 * time.Second
	// retireDelay is how long the reader of a replica that left DNS stays open,
	// for reads already sent to it.
	retireDelay = 30 * time.Second
)

// Reader reads one replica; *ranking.Flight implements it.
type Reader interface {
	Ranking(ctx context.Context, req ranking.Request) (ranking.Result, error)
	Ping(ctx context.Context) error
	Close() error
}

// Pool balances reads over the replicas of one runtime service. Set the
// exported fields before Open.
type Pool struct {
	// ResolveInterval: DefaultResolveInterval when zero.
	ResolveInterval time.Duration
	// MaxAttempts: DefaultMaxAttempts when zero.
	MaxAttempts int
	// EjectAfter and EjectFor: DefaultEjectAfter and DefaultEjectFor when zero.
	EjectAfter int
	EjectFor   time.Duration
	// Resolve returns the replicas' addresses (host:port). Nil means: look up
	// the target's host in DNS and pair every address with the target's port.
	Resolve func(ctx context.Context) ([]string, error)
	// TLS is what the health watch dials each replica's Flight port with, as
	// ranking.Flight.TLS: give it the readers' own configuration (with
	// ServerName set to the service's name, as a replica is dialled by its IP
	// address). Nil: plaintext, the default.
	TLS *tls.Config
	// Logger receives replicas joining, leaving, turning unhealthy and being
	// ejected. Default: discard.
	Logger *slog.Logger

	name, target string
	open         func(addr string) (Reader, error)

	mu       sync.Mutex
	replicas []*replica // in address order
	retired  []retiree  // left DNS; closed after retireDelay
	resolved bool       // one resolution succeeded
	lastErr  error      // of the last resolution
	next     atomic.Uint64

	first     chan struct{} // closed when the first resolution has finished
	firstOnce sync.Once
	waiting   atomic.Int64 // reads waiting for the first resolution

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewPool returns a pool for the replicas behind target (host:port); open
// makes the reader of one replica address. name says what the service is in
// errors ("materialized runtime"). Call Open before use.
func NewPool(name, target string, open func(addr string) (Reader, error)) *Pool {
	return &Pool{name: name, target: target, open: open, first: make(chan struct{})}
}

// Open resolves the replicas once, in the background, and keeps following them
// until Close. It fails only on a target that is not host:port.
func (p *Pool) Open() error {
	if _, _, err := net.SplitHostPort(p.target); err != nil {
		return fmt.Errorf("open %s pool: %w", p.name, err)
	}
	if p.ResolveInterval <= 0 {
		p.ResolveInterval = DefaultResolveInterval
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.EjectAfter <= 0 {
		p.EjectAfter = DefaultEjectAfter
	}
	if p.EjectFor <= 0 {
		p.EjectFor = DefaultEjectFor
	}
	if p.Resolve == nil {
		p.Resolve = p.lookup
	}
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.follow()
	}()
	return nil
}

// Close stops following the replicas and closes every reader; reads in flight fail.
func (p *Pool) Close() error {
	if p.cancel == nil {
		return nil
	}
	p.cancel()
	p.wg.Wait()
	p.mu.Lock()
	rs := p.replicas
	for _, t := range p.retired {
		rs = append(rs, t.r)
	}
	p.replicas, p.retired = nil, nil
	p.mu.Unlock()
	var errs []error
	for _, r := range rs {
		errs = append(errs, r.close())
	}
	return errors.Join(errs...)
}

// lookup resolves the target's host.
func (p *Pool) lookup(ctx context.Context) ([]string, error) {
	host, port, _ := net.SplitHostPort(p.target)
	ips, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = net.JoinHostPort(ip, port)
	}
	return out, nil
}

// follow resolves the replicas every ResolveInterval until Close.
func (p *Pool) follow() {
	t := time.NewTicker(p.ResolveInterval)
	defer t.Stop()
	for {
		p.refresh()
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// refresh resolves once and adds and retires replicas to match. A failed
// resolution keeps the replicas known: DNS that answers nothing while every
// replica restarts must not throw away their readers. The first refresh, failed
// or not, releases the reads waiting for it.
func (p *Pool) refresh() {
	defer p.firstOnce.Do(func() { close(p.first) })
	ctx, cancel := context.WithTimeout(p.ctx, max(p.ResolveInterval, time.Second))
	addrs, err := p.Resolve(ctx)
	cancel()
	p.mu.Lock()
	changed := (err == nil) != (p.lastErr == nil)
	p.lastErr = err
	p.mu.Unlock()
	if err != nil {
		if changed && p.ctx.Err() == nil {
			p.Logger.Warn("resolve replicas", "service", p.name, "target", p.target, logging.ErrorKey, err)
		}
		return
	}
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	var added, kept []*replica
	p.mu.Lock()
	old := p.replicas
	p.mu.Unlock()
	for _, addr := range addrs {
		if i := slices.IndexFunc(old, func(r *replica) bool { return r.addr == addr }); i >= 0 {
			kept = append(kept, old[i])
			continue
		}
		r, err := p.newReplica(addr)
		if err != nil {
			p.Logger.Error("add replica", "service", p.name, "addr", addr, logging.ErrorKey, err)
			continue
		}
		added = append(added, r)
		kept = append(kept, r)
	}
	slices.SortFunc(kept, func(a, b *replica) int { return compare(a.addr, b.addr) })
	p.mu.Lock()
	p.replicas, p.resolved = kept, true
	p.mu.Unlock()
	for _, r := range added {
		p.Logger.Info("replica joined", "service", p.name, "addr", r.addr)
	}
	now := time.Now()
	for _, r := range old {
		if !slices.Contains(kept, r) {
			p.Logger.Info("replica left", "service", p.name, "addr", r.addr)
			r.stopWatch()
			p.mu.Lock()
			p.retired = append(p.retired, retiree{r: r, at: now})
			p.mu.Unlock()
		}
	}
	p.closeRetired(now)
}

// retiree is a replica that left DNS at some time.
type retiree struct {
	r  *replica
	at time.Time
}

// closeRetired closes the readers of replicas that left retireDelay ago.
func (p *Pool) closeRetired(now time.Time) {
	p.mu.Lock()
	var due []*replica
	p.retired = slices.DeleteFunc(p.retired, func(t retiree) bool {
		if now.Sub(t.at) < retireDelay {
			return false
		}
		due = append(due, t.r)
		return true
	})
	p.mu.Unlock()
	for _, r := range due {
		_ = r.close()
	}
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
