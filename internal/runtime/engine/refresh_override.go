package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// RefreshOverrides change one refresh of a dataset, as the body of upstream's
// POST /v1/datasets/{name}/acceleration/refresh does. The zero value changes
// nothing. Later refreshes use the spicepod's settings again.
type RefreshOverrides struct {
	// SQL replaces refresh_sql for this refresh; "" keeps the spicepod's. It
	// has refresh_sql's form: SELECT * | columns FROM <dataset> [WHERE ...]
	// [ORDER BY ...] [LIMIT n].
	SQL string
	// Mode replaces refresh_mode for this refresh: RefreshFull or
	// RefreshAppend; "" keeps the spicepod's. Append without a time_column
	// adds every row the scan returns, as upstream does.
	Mode spicepod.RefreshMode
	// MaxJitter, when positive, delays this refresh by a random time up to it.
	MaxJitter time.Duration
}

func (o RefreshOverrides) isZero() bool { return o == RefreshOverrides{} }

// OverrideError is a refresh override that cannot apply to the dataset; the
// message says what is allowed. It wraps ErrInvalidOverride.
type OverrideError struct{ Msg string }

func (e *OverrideError) Error() string { return e.Msg }
func (e *OverrideError) Unwrap() error { return ErrInvalidOverride }

// RefreshWith asks for an immediate refresh of an accelerated dataset or view,
// with o applied to that one refresh. The overrides of a request that arrives
// while an earlier one waits replace them. Errors: ErrUnknownDataset,
// ErrNotAccelerated, and an *OverrideError for overrides the dataset cannot
// take.
func (e *Engine) RefreshWith(name string, o RefreshOverrides) error {
	if o.isZero() {
		return e.Refresh(name)
	}
	key := strings.ToLower(name)
	d, ok := e.datasets[key]
	if !ok {
		if v, view := e.views[key]; view {
			if !v.accelerated() {
				return fmt.Errorf("refresh %s: %w", name, ErrNotAccelerated)
			}
			return &OverrideError{Msg: fmt.Sprintf("%s is a view, recomputed from its inputs: refresh_sql and refresh_mode do not apply; send no body", name)}
		}
		return fmt.Errorf("refresh %s: %w", name, ErrUnknownDataset)
	}
	if !d.spec.Accelerated() {
		return fmt.Errorf("refresh %s: %w", name, ErrNotAccelerated)
	}
	if err := checkOverrides(d, o); err != nil {
		return err
	}
	e.mu.Lock()
	d.override = &o
	e.mu.Unlock()
	select {
	case d.trigger <- struct{}{}:
	default:
	}
	return nil
}

// checkOverrides refuses overrides the dataset cannot take.
func checkOverrides(d *dataset, o RefreshOverrides) error {
	if d.src == nil || d.spec.Acceleration.RefreshMode == spicepod.RefreshChanges {
		return &OverrideError{Msg: fmt.Sprintf("dataset %s follows its source's changes (refresh_mode: changes): refresh_sql and refresh_mode do not apply; send no body", d.spec.Name)}
	}
	switch o.Mode {
	case "", spicepod.RefreshFull, spicepod.RefreshAppend:
	default:
		return &OverrideError{Msg: fmt.Sprintf("refresh_mode %q is not allowed for one refresh: use full or append", o.Mode)}
	}
	if o.SQL != "" {
		if _, err := spicepod.ParseRefreshQuery(o.SQL, d.spec.Name); err != nil {
			return &OverrideError{Msg: fmt.Sprintf("refresh_sql: %v; write SELECT * | columns FROM %s [WHERE ...] [ORDER BY ...] [LIMIT n]", err, d.spec.Name)}
		}
	}
	if o.MaxJitter < 0 {
		return &OverrideError{Msg: fmt.Sprintf("refresh_jitter_max %s is negative; give a duration such as 500ms", o.MaxJitter)}
	}
	return nil
}

// takeOverride returns and clears the dataset's pending overrides (zero when
// none).
func (e *Engine) takeOverride(d *dataset) RefreshOverrides {
	e.mu.Lock()
	defer e.mu.Unlock()
	if d.override == nil {
		return RefreshOverrides{}
	}
	o := *d.override
	d.override = nil
	return o
}

// apply returns the acceleration settings of a refresh with o applied; acc
// itself is left alone.
func (o RefreshOverrides) apply(acc *spicepod.Acceleration) *spicepod.Acceleration {
	if o.SQL == "" && o.Mode == "" {
		return acc
	}
	out := *acc
	if o.SQL != "" {
		out.RefreshSQL = o.SQL
	}
	if o.Mode != "" {
		out.RefreshMode = o.Mode
	}
	return &out
}

// jitter waits a random time up to o.MaxJitter; false when ctx ended.
func (o RefreshOverrides) jitter(ctx context.Context) bool {
	if o.MaxJitter <= 0 {
		return true
	}
	t := time.NewTimer(time.Duration(rand.Int64N(int64(o.MaxJitter))))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
