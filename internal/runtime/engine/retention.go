package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/cqrs-spice/cqrs/internal/logging"
)

// retentionLoop deletes rows older than retention_period every
// retention_check_interval. Deleting is a data change: the version moves, caches
// and accelerated views follow; the watermark does not (the source did not move).
func (e *Engine) retentionLoop(ctx context.Context, d *dataset) {
	acc := d.spec.Acceleration
	t := time.NewTicker(acc.RetentionCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := e.applyRetention(ctx, d); err != nil && ctx.Err() == nil {
			e.Logger.Warn("retention failed", "dataset", d.name, logging.ErrorKey, err)
		}
	}
}

func (e *Engine) applyRetention(ctx context.Context, d *dataset) error {
	e.mu.Lock()
	loaded := d.loaded
	e.mu.Unlock()
	if !loaded {
		return nil
	}
	cutoff := timeBound(d.spec.TimeFormat, time.Now().Add(-d.spec.Acceleration.RetentionPeriod))
	err := e.update(ctx, func(tx StoreTx) error {
		_, err := tx.DeleteOlderThan(d.name, d.spec.TimeColumn, cutoff)
		return err
	})
	if err != nil {
		return fmt.Errorf("retention of %s: %w", d.name, err)
	}
	e.mu.Lock()
	d.version++
	e.broadcastLocked()
	e.mu.Unlock()
	e.markViewsDirty(d.name)
	e.afterChange(ctx)
	return nil
}
