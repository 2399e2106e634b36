package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// dataset is one dataset's spec and state. State fields are guarded by Engine.mu.
type dataset struct {
	spec    spicepod.Dataset
	name    string
	src     Source
	trigger chan struct{}

	state       State
	loaded      bool
	restored    bool
	watermark   position.LSN
	version     uint64 // bumped on every data change; part of results cache keys
	rows        int64
	lastRefresh time.Time
	lastErr     error
	lastErrAt   time.Time
	refreshes   int64
	failures    int64
	fresh       bool // set by feeds; refresh-mode datasets are fresh while refreshes succeed
	lagBytes    *int64
	lagSeconds  *float64
	override    *RefreshOverrides // for the next refresh; see RefreshWith
}

// refreshLoop loads the dataset, then refreshes it every refresh_check_interval
// (with jitter) and on demand, retrying failures with back-off.
func (e *Engine) refreshLoop(ctx context.Context, d *dataset) {
	first := !d.restored
	if n, ok := d.src.(Notifier); ok {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			err := n.Watch(ctx, func() {
				select {
				case d.trigger <- struct{}{}:
				default:
				}
			})
			if err != nil && ctx.Err() == nil {
				e.Logger.Info("source cannot push changes; relying on refresh_check_interval", "dataset", d.name, logging.ErrorKey, err)
			}
		}()
	}
	var last time.Time
	for ctx.Err() == nil {
		if !spaced(ctx, last, e.MinRefreshSpacing) {
			return
		}
		last = time.Now()
		drain(d.trigger) // this refresh covers triggers that arrived while spacing
		o := e.takeOverride(d)
		if !o.jitter(ctx) {
			return
		}
		e.refreshWithRetry(ctx, d, first, o)
		first = false
		if !e.waitNextRefresh(ctx, d) {
			return
		}
	}
}

// waitNextRefresh waits for the interval (with jitter) or a trigger; false when
// ctx ended.
func (e *Engine) waitNextRefresh(ctx context.Context, d *dataset) bool {
	acc := d.spec.Acceleration
	var tick <-chan time.Time
	if acc.RefreshCheckInterval > 0 {
		wait := acc.RefreshCheckInterval
		if acc.RefreshJitterEnabled && acc.RefreshJitterMax > 0 {
			wait += time.Duration(rand.Int64N(int64(acc.RefreshJitterMax)))
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		tick = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-d.trigger:
	case <-tick:
	}
	return true
}

// drain empties a one-slot signal channel.
func drain(c chan struct{}) {
	select {
	case <-c:
	default:
	}
}

// spaced waits until at least spacing has passed since last; false when ctx ended.
func spaced(ctx context.Context, last time.Time, spacing time.Duration) bool {
	wait := spacing - time.Since(last)
	if last.IsZero() || wait <= 0 {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// refreshWithRetry refreshes once, retrying with exponential back-off. The first
// load retries until it succeeds (a runtime that starts before its source must
// recover on its own); later refreshes give up after refresh_retry_max_attempts
// and wait for the next interval.
func (e *Engine) refreshWithRetry(ctx context.Context, d *dataset, first bool, o RefreshOverrides) {
	acc := d.spec.Acceleration
	backoff := 500 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := e.refreshOnce(ctx, d, o)
		if err == nil || ctx.Err() != nil {
			return
		}
		e.recordFailure(d, err, attempt)
		retry := first || (acc.RefreshRetryEnabled && (acc.RefreshRetryMaxAttempts == 0 || attempt < acc.RefreshRetryMaxAttempts))
		if !retry {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-d.trigger:
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, e.MaxBackoff)
	}
}

func (e *Engine) recordFailure(d *dataset, err error, attempt int) {
	e.mu.Lock()
	d.lastErr, d.lastErrAt, d.failures, d.fresh = err, time.Now(), d.failures+1, false
	if !d.loaded {
		d.state = StateError
	} else {
		d.state = StateReady
	}
	e.broadcastLocked()
	e.mu.Unlock()
	if e.Metrics != nil {
		e.Metrics.refreshErrors.WithLabelValues(d.name).Inc()
		e.Metrics.setState(d.name, d.state)
	}
	e.Logger.Warn("refresh failed; retrying", "dataset", d.name, "attempt", attempt, logging.ErrorKey, err)
}

// refreshOnce runs one full or append refresh in one store transaction, with o
// applied to it.
func (e *Engine) refreshOnce(ctx context.Context, d *dataset, o RefreshOverrides) error {
	acc := o.apply(d.spec.Acceleration)
	start := time.Now()
	e.mu.Lock()
	if d.loaded {
		d.state = StateRefreshing
	}
	e.mu.Unlock()
	req, err := e.scanRequest(ctx, d, acc)
	if err != nil {
		return err
	}
	var rows int64
	var pos position.LSN
	err = d.src.Scan(ctx, req, func(s Snapshot) error {
		pos = s.Position
		return e.update(ctx, func(tx StoreTx) error {
			var err error
			if acc.RefreshMode == spicepod.RefreshAppend {
				_, err = tx.Append(d.name, s.Reader, AppendOptions{Key: acc.PrimaryKey, Upsert: upserts(acc),
					Column: d.spec.TimeColumn, Since: req.sinceValue()})
			} else {
				_, err = tx.Replace(d.name, s.Reader)
			}
			if err != nil {
				return err
			}
			// A source that failed mid-stream may look like a short table to the
			// store: never commit it.
			if err := s.Reader.Err(); err != nil {
				return fmt.Errorf("read source: %w", err)
			}
			if err := createIndexes(tx, d.name, acc); err != nil {
				return err
			}
			return tx.SetWatermark(s.Position, d.name)
		})
	})
	if err != nil {
		return fmt.Errorf("refresh %s: %w", d.name, err)
	}
	rows, err = e.store.RowCount(ctx, d.name)
	if err != nil {
		return err
	}
	e.mu.Lock()
	d.loaded, d.state, d.fresh = true, StateReady, true
	d.watermark, d.rows, d.lastRefresh = pos, rows, time.Now()
	d.lastErr = nil
	d.version++
	d.refreshes++
	e.broadcastLocked()
	e.mu.Unlock()
	e.markViewsDirty(d.name)
	e.afterChange(ctx)
	if e.Metrics != nil {
		e.Metrics.observeRefresh(d.name, time.Since(start), rows, pos)
		e.Metrics.setState(d.name, StateReady)
	}
	e.Logger.Debug("refreshed", "dataset", d.name, "rows", rows, "lsn", pos, "took", time.Since(start))
	return nil
}

// scanRequest turns refresh_sql, refresh_data_window and append state into a
// ScanRequest.
func (e *Engine) scanRequest(ctx context.Context, d *dataset, acc *spicepod.Acceleration) (ScanRequest, error) {
	var req ScanRequest
	if acc.RefreshSQL != "" {
		rq := acc.RefreshQuery()
		req.Columns, req.Where, req.OrderBy = rq.Columns, rq.Where, rq.OrderBy
		req.Limit = max(rq.Limit, 0)
	}
	if acc.RefreshDataWindow > 0 && d.spec.TimeColumn != "" {
		req.Since = &Bound{Column: d.spec.TimeColumn, Value: timeBound(d.spec.TimeFormat, time.Now().Add(-acc.RefreshDataWindow))}
	}
	if acc.RefreshMode == spicepod.RefreshAppend && d.spec.TimeColumn != "" {
		exists, err := e.store.TableExists(ctx, d.name)
		if err != nil {
			return req, err
		}
		if exists {
			max, err := e.store.Max(ctx, d.name, d.spec.TimeColumn)
			if err != nil {
				return req, err
			}
			if max != nil {
				req.Since = &Bound{Column: d.spec.TimeColumn, Value: subtractOverlap(max, acc.RefreshAppendOverlap, d.spec.TimeFormat)}
			}
		}
	}
	return req, nil
}

// upserts reports whether on_conflict asks rows with a known key to replace the
// held ones (rather than be dropped).
func upserts(acc *spicepod.Acceleration) bool {
	for _, v := range acc.OnConflict {
		if v == spicepod.ConflictUpsert {
			return true
		}
	}
	return false
}

// createIndexes (re)creates the spicepod's indexes; a full refresh replaces the
// table and its indexes with it.
func createIndexes(tx StoreTx, table string, acc *spicepod.Acceleration) error {
	for cols, kind := range acc.Indexes {
		var list []string
		for _, c := range strings.Split(strings.Trim(cols, "()"), ",") {
			list = append(list, strings.TrimSpace(c))
		}
		if err := tx.CreateIndex(table, list, kind == spicepod.IndexUnique); err != nil {
			return err
		}
	}
	return nil
}

func (r ScanRequest) sinceValue() any {
	if r.Since == nil {
		return nil
	}
	return r.Since.Value
}

// timeBound renders t in the representation of a time_format.
func timeBound(format spicepod.TimeFormat, t time.Time) any {
	switch format {
	case spicepod.TimeFormatUnixSeconds:
		return t.Unix()
	case spicepod.TimeFormatUnixMillis:
		return t.UnixMilli()
	default:
		return t
	}
}

// subtractOverlap moves the append boundary back by overlap. The boundary itself is
// included (>=), and rows read again are dropped by the store, so rows committed
// later with the boundary's timestamp are neither lost nor duplicated.
func subtractOverlap(max any, overlap time.Duration, format spicepod.TimeFormat) any {
	switch v := max.(type) {
	case time.Time:
		return v.Add(-overlap)
	case int64:
		switch format {
		case spicepod.TimeFormatUnixMillis:
			return v - overlap.Milliseconds()
		default:
			return v - int64(overlap/time.Second)
		}
	case int32:
		return int64(v) - int64(overlap/time.Second)
	default:
		return max
	}
}

// Apply runs fn in one store transaction, records pos as the watermark of every
// named dataset in it, commits, and publishes the new state. Change feeds call it
// once per source transaction (or per batch of whole transactions).
func (e *Engine) Apply(ctx context.Context, datasets []string, pos position.LSN, fn func(StoreTx) error) error {
	err := e.update(ctx, func(tx StoreTx) error {
		if fn != nil {
			if err := fn(tx); err != nil {
				return err
			}
		}
		return tx.SetWatermark(pos, datasets...)
	})
	if err != nil {
		return fmt.Errorf("apply changes at %s: %w", pos, err)
	}
	e.mu.Lock()
	now := time.Now()
	for _, name := range datasets {
		d, ok := e.datasets[name]
		if !ok {
			continue
		}
		d.loaded, d.state, d.watermark, d.lastRefresh = true, StateReady, pos, now
		if fn != nil {
			d.version++
			d.refreshes++
		}
	}
	e.broadcastLocked()
	e.mu.Unlock()
	if fn != nil {
		for _, name := range datasets {
			e.markViewsDirty(name)
		}
	}
	e.afterChange(ctx)
	if e.Metrics != nil {
		kind := "position"
		if fn != nil {
			kind = "data"
		}
		e.Metrics.transactions.WithLabelValues(kind).Inc()
		for _, name := range datasets {
			e.Metrics.watermark.WithLabelValues(name).Set(float64(pos))
			e.Metrics.setState(name, StateReady)
		}
	}
	return nil
}

// Advance records that datasets reflect pos without any data change (a feed's
// heartbeat or keepalive): results cache entries stay valid.
func (e *Engine) Advance(ctx context.Context, datasets []string, pos position.LSN) error {
	return e.Apply(ctx, datasets, pos, nil)
}

// FeedStatus is what a change feed reports about its datasets.
type FeedStatus struct {
	Fresh      bool
	Err        error // the last error, nil when healthy
	LagBytes   *int64
	LagSeconds *float64
}

// SetFeedStatus records a change feed's health for its datasets.
func (e *Engine) SetFeedStatus(datasets []string, st FeedStatus) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, name := range datasets {
		d, ok := e.datasets[name]
		if !ok {
			continue
		}
		d.fresh, d.lagBytes, d.lagSeconds = st.Fresh, st.LagBytes, st.LagSeconds
		if st.Err != nil {
			d.lastErr, d.lastErrAt = st.Err, time.Now()
			d.failures++
			if !d.loaded {
				d.state = StateError
			}
		} else if d.loaded {
			d.lastErr = nil
		}
	}
}

// Status describes every dataset and view, sorted by name.
func (e *Engine) Status(ctx context.Context) []Status {
	var out []Status
	for _, info := range e.Tables() {
		st, err := e.StatusOf(ctx, info.Name)
		if err == nil {
			out = append(out, st)
		}
	}
	return out
}

// StatusOf describes one dataset or view.
func (e *Engine) StatusOf(ctx context.Context, name string) (Status, error) {
	name = strings.ToLower(name)
	sub := e.subscriptionInfo(name)
	e.mu.Lock()
	var st Status
	if d, ok := e.datasets[name]; ok {
		st = Status{Name: d.name, Kind: "dataset", From: d.spec.From, Accelerated: d.spec.Accelerated(),
			State: d.state, Ready: d.loaded, Fresh: d.fresh && d.loaded, Watermark: d.watermark,
			Refreshes: d.refreshes, Failures: d.failures, LagBytes: d.lagBytes, LagSeconds: d.lagSeconds, Subscription: sub}
		if d.spec.Acceleration != nil {
			st.RefreshMode = string(d.spec.Acceleration.RefreshMode)
		}
		if !st.Accelerated && d.src != nil {
			// Every query reads the source: there is nothing to load or wait for.
			st.State, st.Ready, st.Fresh = StateReady, true, true
		}
		setTimes(&st, d.lastRefresh, d.lastErr, d.lastErrAt)
	} else if v, ok := e.views[name]; ok {
		st = Status{Name: v.name, Kind: "view", Accelerated: v.accelerated(), State: v.state,
			Ready: v.loaded(), Fresh: true, Watermark: e.viewWatermarkLocked(v), Refreshes: v.refreshes, Subscription: sub}
		setTimes(&st, v.lastRefresh, v.lastErr, v.lastErrAt)
		for _, dep := range v.deps {
			if d, ok := e.datasets[dep]; ok && !(d.fresh && d.loaded) {
				st.Fresh = false
			}
		}
	} else {
		e.mu.Unlock()
		return st, fmt.Errorf("status of %s: %w", name, ErrUnknownDataset)
	}
	e.mu.Unlock()
	st.WatermarkS = st.Watermark.String()
	if st.Ready && (st.Kind == "dataset" && st.Accelerated || st.Kind == "view" && st.Accelerated) {
		if n, err := e.store.RowCount(ctx, name); err == nil {
			st.Rows = n
		}
	}
	return st, nil
}

func setTimes(st *Status, last time.Time, err error, errAt time.Time) {
	if !last.IsZero() {
		t := last
		st.LastRefresh = &t
	}
	if err != nil {
		st.LastError = err.Error()
		t := errAt
		st.LastErrorAt = &t
	}
}
