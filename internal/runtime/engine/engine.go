package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/lru"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// Defaults for Engine's tunables.
const (
	// DefaultMinPositionTimeout bounds the wait for a requested minimum position.
	DefaultMinPositionTimeout = 10 * time.Second
	// DefaultMaxBackoff caps the wait between retries of a failing refresh.
	DefaultMaxBackoff = 30 * time.Second
	// DefaultMinRefreshSpacing is the least time between the starts of two
	// refreshes of one dataset or view. The first change after a quiet spell is
	// refreshed at once; under a stream of changes (a chained upstream pushing a
	// notice per write) refreshes coalesce instead of running back to back.
	DefaultMinRefreshSpacing = 50 * time.Millisecond
	// DefaultQueryTimeout bounds one query from its arrival.
	DefaultQueryTimeout = 30 * time.Second
	// DefaultMaxQueryBytes bounds a query text, over HTTP and Flight alike.
	DefaultMaxQueryBytes = 1 << 20
	// DefaultPlanCacheBytes bounds the parsed-query cache, texts included.
	DefaultPlanCacheBytes = 16 << 20
)

// Engine runs one spicepod. Create it with New, add datasets and views, then Open.
type Engine struct {
	// MinPositionTimeout bounds how long a query waits for a minimum position;
	// DefaultMinPositionTimeout when zero. A shorter context deadline wins.
	MinPositionTimeout time.Duration
	// MaxBackoff caps retry back-off; DefaultMaxBackoff when zero.
	MaxBackoff time.Duration
	// MinRefreshSpacing spaces refreshes; DefaultMinRefreshSpacing when zero.
	MinRefreshSpacing time.Duration
	// QueryTimeout bounds a query from its arrival, its wait for a slot
	// included; DefaultQueryTimeout when zero. Past it the query fails with
	// ErrQueryTimeout.
	QueryTimeout time.Duration
	// MaxQueryBytes bounds a query's text; DefaultMaxQueryBytes when zero.
	// Longer texts fail with ErrQueryTooLarge before anything is parsed or held.
	MaxQueryBytes int
	// MaxResultBytes, when set, bounds each result below the store's own limit.
	MaxResultBytes int64
	// PlanCacheBytes bounds the cache of parsed query texts, the texts
	// included; DefaultPlanCacheBytes when zero.
	PlanCacheBytes int64
	// Admission bounds the queries running at once; see Admission.
	Admission Admission
	// Cache is the results cache; nil disables it.
	Cache *Cache
	// SubscriptionQueue is how many events a subscriber may fall behind;
	// DefaultSubscriptionQueue when zero.
	SubscriptionQueue int
	// Metrics, when set, receives dataset, refresh and query metrics.
	Metrics *Metrics
	// Logger receives refresh failures, feed and view errors and restores;
	// nil means slog.Default().
	Logger *slog.Logger

	store    Store
	datasets map[string]*dataset
	views    map[string]*view
	feeds    []Feed

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every change of state
	closed   bool
	plans    *lru.Cache[*plan] // SQL text -> what it reads
	inflight singleflight.Group
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	onChange []func()
	subs     subscriptions
}

// Feed is a long-running source of changes for some datasets (Postgres logical
// replication). It writes through Engine.Apply and reports through
// Engine.SetFeedStatus. Run returns when ctx ends.
type Feed interface {
	Datasets() []string
	Run(ctx context.Context) error
}

// New returns an engine over store.
func New(store Store) *Engine {
	return &Engine{
		plans:    lru.New[*plan](DefaultPlanCacheBytes, 0, nil),
		store:    store,
		datasets: map[string]*dataset{},
		views:    map[string]*view{},
		changed:  make(chan struct{}),
	}
}

// AddDataset registers a dataset. src is nil for datasets served by a Feed
// (refresh_mode: changes), which must then be added with AddFeed.
func (e *Engine) AddDataset(spec spicepod.Dataset, src Source) error {
	name := strings.ToLower(spec.Name)
	if _, dup := e.datasets[name]; dup {
		return fmt.Errorf("add dataset %s: duplicate name", spec.Name)
	}
	e.datasets[name] = &dataset{spec: spec, name: name, src: src, state: StateInitializing, trigger: make(chan struct{}, 1)}
	return nil
}

// AddView registers a view.
func (e *Engine) AddView(spec spicepod.View) error {
	name := strings.ToLower(spec.Name)
	if _, dup := e.datasets[name]; dup {
		return fmt.Errorf("add view %s: a dataset has the same name", spec.Name)
	}
	e.views[name] = &view{spec: spec, name: name, state: StateInitializing, dirty: make(chan struct{}, 1)}
	return nil
}

// AddFeed registers a change feed; its datasets must have been added with a nil
// Source.
func (e *Engine) AddFeed(f Feed) { e.feeds = append(e.feeds, f) }

// OnChange registers fn to be called (without locks held) after every change of
// data or watermarks. The Flight server uses it to push changes to chained runtimes.
func (e *Engine) OnChange(fn func()) { e.onChange = append(e.onChange, fn) }

// Open resolves view dependencies, restores stored watermarks and starts loading.
// It returns quickly: datasets load in the background.
func (e *Engine) Open(ctx context.Context) error {
	if e.Logger == nil {
		e.Logger = slog.Default()
	}
	if e.MinPositionTimeout == 0 {
		e.MinPositionTimeout = DefaultMinPositionTimeout
	}
	if e.MaxBackoff == 0 {
		e.MaxBackoff = DefaultMaxBackoff
	}
	if e.MinRefreshSpacing == 0 {
		e.MinRefreshSpacing = DefaultMinRefreshSpacing
	}
	if e.QueryTimeout <= 0 {
		e.QueryTimeout = DefaultQueryTimeout
	}
	if e.MaxQueryBytes <= 0 {
		e.MaxQueryBytes = DefaultMaxQueryBytes
	}
	if e.PlanCacheBytes > 0 && e.PlanCacheBytes != DefaultPlanCacheBytes {
		e.plans = lru.New[*plan](e.PlanCacheBytes, 0, nil)
	}
	if err := e.resolveViews(ctx); err != nil {
		return err
	}
	if err := e.restore(ctx); err != nil {
		return err
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	for _, d := range e.datasets {
		if d.src == nil || !d.spec.Accelerated() {
			continue
		}
		e.wg.Add(1)
		go func(d *dataset) {
			defer e.wg.Done()
			e.refreshLoop(e.ctx, d)
		}(d)
	}
	for _, d := range e.datasets {
		if acc := d.spec.Acceleration; d.spec.Accelerated() && acc.RetentionCheckEnabled && acc.RetentionCheckInterval > 0 {
			e.wg.Add(1)
			go func(d *dataset) {
				defer e.wg.Done()
				e.retentionLoop(e.ctx, d)
			}(d)
		}
	}
	for _, f := range e.feeds {
		e.wg.Add(1)
		go func(f Feed) {
			defer e.wg.Done()
			if err := f.Run(e.ctx); err != nil && !errors.Is(err, context.Canceled) {
				e.Logger.Error("change feed stopped", "datasets", f.Datasets(), logging.ErrorKey, err)
			}
		}(f)
	}
	for _, v := range e.views {
		if v.accelerated() {
			e.wg.Add(1)
			go func(v *view) {
				defer e.wg.Done()
				e.viewLoop(e.ctx, v)
			}(v)
		}
	}
	e.afterChange(ctx)
	return nil
}

// restore reads stored watermarks (file mode): datasets whose table survived serve
// it at once and refresh behind it.
func (e *Engine) restore(ctx context.Context) error {
	wms, err := e.store.Watermarks(ctx)
	if err != nil {
		return err
	}
	for name, d := range e.datasets {
		wm, ok := wms[name]
		if !ok || !d.spec.Accelerated() || d.spec.Acceleration.Mode != spicepod.ModeFile {
			continue
		}
		exists, err := e.store.TableExists(ctx, name)
		if err != nil || !exists {
			continue
		}
		d.loaded, d.state, d.watermark, d.version = true, StateReady, wm, 1
		d.restored = true
		e.Logger.Info("restored dataset from file", "dataset", name, "lsn", wm)
	}
	return nil
}

// Close stops refreshes and feeds and waits for them.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	if e.cancel != nil {
		e.cancel()
	}
	e.closeSubscriptions()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("close engine: %w", ctx.Err())
	}
	if e.Cache != nil {
		e.Cache.Clear()
	}
	return nil
}

// Ready reports whether every accelerated dataset and view has loaded once.
func (e *Engine) Ready() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, d := range e.datasets {
		if d.spec.Accelerated() && !d.loaded {
			return false
		}
	}
	for _, v := range e.views {
		if !v.loaded() {
			return false
		}
	}
	return true
}

// Refresh asks for an immediate refresh of an accelerated dataset or view.
func (e *Engine) Refresh(name string) error {
	name = strings.ToLower(name)
	if d, ok := e.datasets[name]; ok {
		if !d.spec.Accelerated() {
			return fmt.Errorf("refresh %s: %w", name, ErrNotAccelerated)
		}
		if d.src == nil {
			return nil // a change feed keeps it current; nothing to trigger
		}
		select {
		case d.trigger <- struct{}{}:
		default:
		}
		return nil
	}
	if v, ok := e.views[name]; ok {
		if !v.accelerated() {
			return fmt.Errorf("refresh %s: %w", name, ErrNotAccelerated)
		}
		v.markDirty()
		return nil
	}
	return fmt.Errorf("refresh %s: %w", name, ErrUnknownDataset)
}

// Tables lists datasets and views for catalogs, sorted by name.
func (e *Engine) Tables() []TableInfo {
	var out []TableInfo
	for name := range e.datasets {
		out = append(out, TableInfo{Name: name, Type: "BASE TABLE"})
	}
	for name := range e.views {
		out = append(out, TableInfo{Name: name, Type: "VIEW"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Watermark returns the position the named dataset or view reflects.
func (e *Engine) Watermark(name string) (position.LSN, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	name = strings.ToLower(name)
	if d, ok := e.datasets[name]; ok {
		return d.watermark, nil
	}
	if v, ok := e.views[name]; ok {
		return e.viewWatermarkLocked(v), nil
	}
	return 0, fmt.Errorf("watermark of %s: %w", name, ErrUnknownDataset)
}

// Changed returns a channel closed at the next change of data or watermarks.
func (e *Engine) Changed() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.changed
}

// broadcastLocked wakes everyone waiting for a change. e.mu must be held.
func (e *Engine) broadcastLocked() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// afterChange creates query-time views whose inputs are now loaded, marks
// accelerated views dirty and calls OnChange hooks.
func (e *Engine) afterChange(ctx context.Context) {
	for _, v := range e.views {
		if v.accelerated() {
			continue
		}
		e.mu.Lock()
		ready := !v.created && e.depsLoadedLocked(v.deps)
		e.mu.Unlock()
		if ready {
			e.createView(ctx, v)
		}
	}
	for _, fn := range e.onChange {
		fn()
	}
}

func (e *Engine) createView(ctx context.Context, v *view) {
	err := e.store.CreateView(ctx, v.name, v.spec.SQL)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		v.state, v.lastErr, v.lastErrAt = StateError, err, time.Now()
		e.Logger.Error("create view", "view", v.name, logging.ErrorKey, err)
		return
	}
	v.created, v.state, v.lastErr = true, StateReady, nil
	e.broadcastLocked()
}

func (e *Engine) depsLoadedLocked(deps []string) bool {
	for _, name := range deps {
		if d, ok := e.datasets[name]; ok && !d.loaded {
			return false
		}
		if v, ok := e.views[name]; ok && v.accelerated() && !v.matLoaded {
			return false
		}
	}
	return true
}
