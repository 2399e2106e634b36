package flightsqlsrc

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// fallback keeps the dataset current without subscriptions, as before them: a
// whole read at once, then on every change notice of the upstream (when it
// sends them) and every RefreshInterval. It returns nil after
// ResubscribeInterval, so that Run tries to subscribe again, and the error of a
// failed read otherwise.
func (f *Feed) fallback(ctx context.Context) error {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, f.ResubscribeInterval)
	defer cancel()
	trigger := make(chan struct{}, 1)
	trigger <- struct{}{}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // before the wait: ends Watch
	if n, ok := f.up.(engine.Notifier); ok {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := n.Watch(ctx, func() {
				select {
				case trigger <- struct{}{}:
				default:
				}
			})
			if err != nil {
				f.Logger.Debug("no change notices either; reading every refresh interval", logDataset, f.dataset, logging.ErrorKey, err)
			}
		}()
	}
	tick := time.NewTicker(f.RefreshInterval)
	defer tick.Stop()
	for {
		select {
		case <-trigger:
		case <-tick.C:
		case <-ctx.Done():
			return parent.Err()
		}
		if err := f.refresh(ctx); err != nil {
			if parent.Err() == nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
				return nil // the resubscribe interval ran out mid-read
			}
			return err
		}
		f.report(true, nil)
	}
}

// refresh replaces the local table with a whole read of the upstream's.
func (f *Feed) refresh(ctx context.Context) error {
	return f.up.Scan(ctx, engine.ScanRequest{}, func(s engine.Snapshot) error {
		return f.eng.Apply(ctx, f.Datasets(), s.Position, func(tx engine.StoreTx) error {
			if _, err := tx.Replace(f.dataset, s.Reader); err != nil {
				return err
			}
			return s.Reader.Err()
		})
	})
}
