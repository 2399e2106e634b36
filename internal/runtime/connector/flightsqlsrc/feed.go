package flightsqlsrc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// Defaults for Feed's tunables.
const (
	// DefaultFeedMaxBackoff caps the wait between subscription attempts.
	DefaultFeedMaxBackoff = time.Second
	// DefaultRefreshInterval is how often a feed whose upstream has no
	// subscriptions reads the whole table, besides on every change notice.
	DefaultRefreshInterval = 10 * time.Second
	// DefaultResubscribeInterval is how often a feed that fell back to full reads
	// tries to subscribe again (the upstream may have been upgraded).
	DefaultResubscribeInterval = time.Minute
	// DefaultMaxBatchChanges bounds the upstream changes applied in one store
	// transaction when they arrive faster than they are applied.
	DefaultMaxBatchChanges = 256
	// DefaultMaxBatchRows bounds the rows those changes retract and insert
	// together (a batch stops growing once it holds this many).
	DefaultMaxBatchRows = 64 << 10
	// DefaultApplyShare is the share of one core the feed's store
	// transactions may take while changes stream (engine.Pacer). Twice
	// runtime 1's: a subscriber's transaction (a rewrite of the subscribed
	// table) takes longer than a new order's insert, and at 5% its wait would
	// outlast the gap between changes at 100 a second. Under load its
	// transactions follow the upstream's, which are paced already.
	DefaultApplyShare = 0.1
	// DefaultMaxApplyWait caps the wait that ApplyShare puts between two store
	// transactions, and so what it adds to a change's time to visible.
	DefaultMaxApplyWait = 20 * time.Millisecond
)

// feedMinBackoff is the first wait after a failure.
const feedMinBackoff = 100 * time.Millisecond

// Log attribute keys of the feed.
const (
	logDataset = "dataset"
	logLSN     = "lsn"
	logMode    = "mode"
)

// Engine is what a Feed writes through; *engine.Engine implements it.
type Engine interface {
	Apply(ctx context.Context, datasets []string, pos position.LSN, fn func(engine.StoreTx) error) error
	Advance(ctx context.Context, datasets []string, pos position.LSN) error
	SetFeedStatus(datasets []string, st engine.FeedStatus)
}

// Upstream is what a Feed reads: a subscription, and for upstreams without
// subscriptions whole reads (Scan). When it also implements engine.Notifier,
// those reads follow its change notices. *Source and the spice.ai connector's
// Source implement it.
type Upstream interface {
	Subscribe(ctx context.Context, since position.LSN) (*Stream, error)
	Scan(ctx context.Context, req engine.ScanRequest, fn func(engine.Snapshot) error) error
}

// Feed keeps one dataset (refresh_mode: changes, from: flightsql: or spice.ai:)
// in step with the upstream's table or view by subscription: the snapshot
// replaces the local table, each change is applied as a multiset diff
// (StoreTx.ApplyDiff), each with the upstream's position as watermark. A stream
// that ends (the upstream restarted, this side fell too far behind, silence past
// the heartbeat timeout) is subscribed again, for a new snapshot, after a
// back-off. An upstream that answers Unimplemented has no subscriptions: the
// feed then reads the whole table on every change notice and every
// RefreshInterval, says so once in the log, and tries to subscribe again every
// ResubscribeInterval. It implements engine.Feed; create it with NewFeed,
// adjust the exported fields, and register it with Engine.AddFeed.
type Feed struct {
	// Logger receives subscriptions, fallbacks and failures; nil means
	// slog.Default().
	Logger *slog.Logger
	// MaxBackoff caps the wait between attempts (DefaultFeedMaxBackoff when
	// zero).
	MaxBackoff time.Duration
	// RefreshInterval spaces the whole reads of the fallback
	// (DefaultRefreshInterval when zero).
	RefreshInterval time.Duration
	// ResubscribeInterval is how long the fallback runs before subscribing is
	// tried again (DefaultResubscribeInterval when zero).
	ResubscribeInterval time.Duration
	// MaxBatchChanges bounds the changes applied in one transaction
	// (DefaultMaxBatchChanges when zero).
	MaxBatchChanges int
	// MaxBatchRows bounds the rows of the changes applied in one transaction
	// (DefaultMaxBatchRows when zero); a single larger change is applied alone.
	MaxBatchRows int64
	// ApplyShare bounds the share of one core the store transactions take
	// while changes stream: after one that took d, the next starts no sooner
	// than d*(1/ApplyShare-1) after it ended (at most MaxApplyWait) and takes
	// every change that arrived meanwhile (engine.Pacer). DefaultApplyShare
	// when zero; 1 or more applies each batch as soon as the last one ended.
	ApplyShare float64
	// MaxApplyWait caps that wait (DefaultMaxApplyWait when zero).
	MaxApplyWait time.Duration

	eng     Engine
	up      Upstream
	dataset string

	fellBack bool // the fallback was logged; owned by Run's goroutine
	// reflects is the upstream position the local rows reflect, as of the
	// last snapshot or change applied (zero before the first): a new
	// subscription asks for a snapshot at or past it. Owned by Run's goroutine.
	reflects position.LSN
}

var _ engine.Feed = (*Feed)(nil)

// NewFeed returns a feed that keeps dataset in step with up through eng.
func NewFeed(eng Engine, dataset string, up Upstream) *Feed {
	return &Feed{eng: eng, up: up, dataset: dataset}
}

// Datasets returns the one dataset the feed serves.
func (f *Feed) Datasets() []string { return []string{f.dataset} }

func (f *Feed) setDefaults() {
	if f.Logger == nil {
		f.Logger = slog.Default()
	}
	if f.MaxBackoff <= 0 {
		f.MaxBackoff = DefaultFeedMaxBackoff
	}
	if f.RefreshInterval <= 0 {
		f.RefreshInterval = DefaultRefreshInterval
	}
	if f.ResubscribeInterval <= 0 {
		f.ResubscribeInterval = DefaultResubscribeInterval
	}
	if f.MaxBatchChanges <= 0 {
		f.MaxBatchChanges = DefaultMaxBatchChanges
	}
	if f.MaxBatchRows <= 0 {
		f.MaxBatchRows = DefaultMaxBatchRows
	}
	if f.ApplyShare <= 0 {
		f.ApplyShare = DefaultApplyShare
	}
	if f.MaxApplyWait <= 0 {
		f.MaxApplyWait = DefaultMaxApplyWait
	}
}

// Run follows the upstream until ctx ends, keeping the last data through
// failures and reporting them with SetFeedStatus.
func (f *Feed) Run(ctx context.Context) error {
	f.setDefaults()
	backoff := feedMinBackoff
	reauth := true // may retry at once after a refused token
	for ctx.Err() == nil {
		began := time.Now()
		err := f.subscribed(ctx)
		if ctx.Err() != nil {
			break
		}
		if status.Code(err) == codes.Unauthenticated && reauth {
			reauth = false // a restarted upstream issues new tokens: handshake again now
			continue
		}
		reauth = status.Code(err) != codes.Unauthenticated
		if status.Code(err) == codes.Unimplemented {
			if !f.fellBack {
				f.fellBack = true
				f.Logger.Warn("the upstream serves no subscriptions; falling back to change notices and whole reads",
					logDataset, f.dataset, logging.ErrorKey, err)
			}
			if err = f.fallback(ctx); err == nil {
				backoff = feedMinBackoff
				continue
			}
		}
		if ctx.Err() != nil {
			break
		}
		f.report(false, err)
		if time.Since(began) > f.MaxBackoff {
			backoff = feedMinBackoff // it ran for a while: this is a new failure
		}
		level := slog.LevelWarn
		if c := status.Code(err); c == codes.ResourceExhausted || c == codes.Aborted {
			level = slog.LevelInfo // fell behind, or the rows were replaced: a new snapshot catches up
		}
		f.Logger.Log(ctx, level, "subscription ended; subscribing again", logDataset, f.dataset, "in", backoff, logging.ErrorKey, err)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, f.MaxBackoff)
	}
	return nil
}

// report publishes the feed's health.
func (f *Feed) report(fresh bool, err error) {
	f.eng.SetFeedStatus(f.Datasets(), engine.FeedStatus{Fresh: fresh && err == nil, Err: err})
}

// subscribed runs one subscription: it applies the snapshot, then the changes,
// until the stream or an apply fails.
func (f *Feed) subscribed(ctx context.Context) error {
	st, err := f.up.Subscribe(ctx, f.reflects)
	if err != nil {
		return err
	}
	defer st.Close()
	if f.fellBack {
		f.fellBack = false
		f.Logger.Info("the upstream serves subscriptions again", logDataset, f.dataset)
	}
	err = f.eng.Apply(ctx, f.Datasets(), st.Position, func(tx engine.StoreTx) error {
		rd := st.Snapshot()
		defer rd.Release()
		if _, err := tx.Replace(f.dataset, rd); err != nil {
			return err
		}
		if err := rd.Err(); err != nil {
			return fmt.Errorf("read the snapshot: %w", err)
		}
		if !st.Complete() {
			return errors.New("read the snapshot: the stream ended before its commit marker")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("apply the snapshot of %s: %w", f.dataset, err)
	}
	f.reflects = max(f.reflects, st.Position)
	f.Logger.Info("subscribed", logDataset, f.dataset, logLSN, st.Position, logMode, st.Mode)
	f.report(true, nil)
	return f.follow(ctx, st)
}

// follow reads changes in one goroutine and applies them in this one: every
// change that has arrived while the last transaction ran, or while the pacer
// held the next one back (ApplyShare), goes into the next (group commit), so
// a lone change after a quiet spell is applied at once and batches grow with
// the rate, up to MaxBatchChanges and MaxBatchRows.
func (f *Feed) follow(ctx context.Context, st *Stream) error {
	changes := make(chan Change, f.MaxBatchChanges)
	var readErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(changes)
		for {
			c, err := st.Next()
			if err != nil {
				readErr = err
				return
			}
			select {
			case changes <- c:
			case <-ctx.Done():
				c.Diff.Release()
				readErr = ctx.Err()
				return
			}
		}
	}()
	defer func() {
		st.Stop() // ends the reader's Next
		for c := range changes {
			c.Diff.Release()
		}
		wg.Wait() // the reader is done with st: Close may release it
	}()
	pacer := engine.Pacer{Share: f.ApplyShare, MaxWait: f.MaxApplyWait}
	for c := range changes {
		batch := f.gather(ctx, changes, c, pacer.Wait())
		began := time.Now()
		err := f.apply(ctx, st.Schema(), batch)
		pacer.Done(began)
		if err == nil {
			f.reflects = max(f.reflects, batch[len(batch)-1].Position)
		}
		for _, c := range batch {
			c.Diff.Release()
		}
		if err != nil {
			return err
		}
	}
	wg.Wait()
	return readErr
}

// gather returns first and the changes queued behind it, within the batch's
// bounds; when wait is positive it first sleeps that long, so that the
// changes arriving meanwhile join the batch without waking the feed one by
// one.
func (f *Feed) gather(ctx context.Context, changes <-chan Change, first Change, wait time.Duration) []Change {
	batch := append(make([]Change, 0, 8), first)
	rows := diffRows(first.Diff)
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	for len(batch) < f.MaxBatchChanges && rows < f.MaxBatchRows {
		select {
		case c, ok := <-changes:
			if !ok {
				return batch
			}
			batch = append(batch, c)
			rows += diffRows(c.Diff)
		default:
			return batch
		}
	}
	return batch
}

func diffRows(d engine.Diff) int64 {
	del, ins := d.Rows()
	return del + ins
}

// apply applies changes in one transaction, at the last one's position, as
// one diff (netDiffs) when there are several; only progress advances the
// watermark without touching the data.
func (f *Feed) apply(ctx context.Context, schema *arrow.Schema, batch []Change) error {
	last := batch[len(batch)-1].Position
	var diffs []engine.Diff
	for _, c := range batch {
		if !c.Diff.Empty() {
			diffs = append(diffs, c.Diff)
		}
	}
	if len(diffs) == 0 {
		return f.eng.Advance(ctx, f.Datasets(), last)
	}
	if len(diffs) > 1 && nettable(schema) {
		net := netDiffs(schema, diffs)
		defer net.Release()
		return f.eng.Apply(ctx, f.Datasets(), last, func(tx engine.StoreTx) error {
			if err := applyChange(tx, f.dataset, schema, net); err != nil {
				return fmt.Errorf("apply the %d changes from %s to %s: %w", len(diffs), batch[0].Position, last, err)
			}
			return nil
		})
	}
	return f.eng.Apply(ctx, f.Datasets(), last, func(tx engine.StoreTx) error {
		for _, c := range batch {
			if c.Diff.Empty() {
				continue
			}
			if err := applyChange(tx, f.dataset, schema, c.Diff); err != nil {
				return fmt.Errorf("apply the change at %s: %w", c.Position, err)
			}
		}
		return nil
	})
}

func applyChange(tx engine.StoreTx, table string, schema *arrow.Schema, c engine.Diff) error {
	var del, ins array.RecordReader
	var err error
	if len(c.Delete) > 0 {
		if del, err = array.NewRecordReader(schema, c.Delete); err != nil {
			return err
		}
		defer del.Release()
	}
	if len(c.Insert) > 0 {
		if ins, err = array.NewRecordReader(schema, c.Insert); err != nil {
			return err
		}
		defer ins.Release()
	}
	return tx.ApplyDiff(table, del, ins)
}
