package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// view is a view's spec and state; state fields are guarded by Engine.mu.
//
// A query-time view is a DuckDB view, created once its inputs have loaded. A view
// with an acceleration block is materialized into a table of its own name and
// recomputed after its inputs change; bursts of changes coalesce into one
// recomputation.
type view struct {
	spec  spicepod.View
	name  string
	deps  []string // datasets and accelerated views it reads, transitively
	dirty chan struct{}

	state       State
	created     bool // query-time: the DuckDB view exists
	matLoaded   bool // accelerated: the table has been computed once
	watermark   position.LSN
	version     uint64
	lastRefresh time.Time
	lastErr     error
	lastErrAt   time.Time
	refreshes   int64
}

func (v *view) accelerated() bool { return v.spec.Acceleration != nil && v.spec.Acceleration.Enabled }

func (v *view) loaded() bool {
	if v.accelerated() {
		return v.matLoaded
	}
	return v.created
}

func (v *view) markDirty() {
	select {
	case v.dirty <- struct{}{}:
	default:
	}
}

// resolveViews finds what each view reads. A view may read datasets and other
// views; it may not read a dataset without acceleration (it could never be
// created as a DuckDB view), which is refused with a clear message.
func (e *Engine) resolveViews(ctx context.Context) error {
	direct := map[string][]string{}
	for name, v := range e.views {
		// A view's text is run inside CREATE VIEW; a second statement after a
		// semicolon would run too, with the runtime's rights.
		if err := e.store.CheckView(ctx, v.spec.SQL); err != nil {
			return fmt.Errorf("view %s: sql: %w", name, err)
		}
		names, err := e.store.Tables(ctx, v.spec.SQL)
		if err != nil {
			return fmt.Errorf("view %s: parse sql: %w", name, err)
		}
		direct[name] = names
	}
	for name, v := range e.views {
		seen := map[string]bool{}
		var walk func(string) error
		walk = func(n string) error {
			for _, ref := range direct[n] {
				ref = strings.ToLower(ref)
				if seen[ref] {
					continue
				}
				seen[ref] = true
				if d, ok := e.datasets[ref]; ok {
					if !d.spec.Accelerated() {
						return fmt.Errorf("view %s reads dataset %s, which is not accelerated: add an acceleration block to %s", name, ref, ref)
					}
					v.deps = append(v.deps, ref)
					continue
				}
				if ref == name {
					return fmt.Errorf("view %s reads itself", name)
				}
				if w, ok := e.views[ref]; ok {
					if w.accelerated() {
						v.deps = append(v.deps, ref)
						continue
					}
					if err := walk(ref); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if err := walk(name); err != nil {
			return err
		}
	}
	return nil
}

// markViewsDirty marks the accelerated views that read dataset.
func (e *Engine) markViewsDirty(dataset string) {
	for _, v := range e.views {
		if !v.accelerated() {
			continue
		}
		for _, dep := range v.deps {
			if dep == dataset {
				v.markDirty()
				break
			}
		}
	}
}

// viewLoop recomputes an accelerated view whenever it is marked dirty.
func (e *Engine) viewLoop(ctx context.Context, v *view) {
	v.markDirty()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-v.dirty:
		}
		if !spaced(ctx, last, e.MinRefreshSpacing) {
			return
		}
		last = time.Now()
		drain(v.dirty) // this recomputation covers changes marked while spacing
		if err := e.recompute(ctx, v); err != nil && ctx.Err() == nil {
			e.mu.Lock()
			v.lastErr, v.lastErrAt = err, time.Now()
			if !v.matLoaded {
				v.state = StateError
			}
			e.mu.Unlock()
			e.Logger.Error("recompute view", "view", v.name, logging.ErrorKey, err)
		}
	}
}

func (e *Engine) recompute(ctx context.Context, v *view) error {
	e.mu.Lock()
	if !e.depsLoadedLocked(v.deps) {
		e.mu.Unlock()
		return nil // recomputed when the last input loads
	}
	// Read before computing: the data is at least this fresh.
	wm := e.minWatermarkLocked(v.deps)
	e.mu.Unlock()
	start := time.Now()
	err := e.update(ctx, func(tx StoreTx) error {
		if _, err := tx.Materialize(v.name, v.spec.SQL); err != nil {
			return err
		}
		return tx.SetWatermark(wm, v.name)
	})
	if err != nil {
		return err
	}
	e.mu.Lock()
	v.matLoaded, v.state, v.watermark, v.lastErr = true, StateReady, wm, nil
	v.version++
	v.refreshes++
	v.lastRefresh = time.Now()
	e.broadcastLocked()
	e.mu.Unlock()
	e.markViewsDirty(v.name)
	e.afterChange(ctx)
	if e.Metrics != nil {
		e.Metrics.observeRefresh(v.name, time.Since(start), -1, wm)
	}
	return nil
}

// viewWatermarkLocked is an accelerated view's own watermark, or the least of a
// query-time view's inputs.
func (e *Engine) viewWatermarkLocked(v *view) position.LSN {
	if v.accelerated() {
		return v.watermark
	}
	return e.minWatermarkLocked(v.deps)
}

// minWatermarkLocked returns the least watermark of the named datasets and
// accelerated views; zero when any is unknown or none is given.
func (e *Engine) minWatermarkLocked(names []string) position.LSN {
	var out position.LSN
	for i, name := range names {
		var wm position.LSN
		if d, ok := e.datasets[name]; ok {
			wm = d.watermark
		} else if v, ok := e.views[name]; ok {
			wm = v.watermark
		}
		if i == 0 || wm < out {
			out = wm
		}
	}
	return out
}
