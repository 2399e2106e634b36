package cdc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// Defaults for Feed's tunables.
const (
	// DefaultHeartbeatInterval is how often the feed writes a heartbeat message into
	// the WAL and polls the source's current position.
	DefaultHeartbeatInterval = time.Second
	// DefaultLagPollInterval is how often the source's position is polled when
	// heartbeats are off.
	DefaultLagPollInterval = 5 * time.Second
	// DefaultStatusInterval is how often the feed acknowledges what it applied.
	DefaultStatusInterval = time.Second
	// DefaultMaxBackoff caps the wait between reconnection attempts: the feed
	// is back within about that long of Postgres answering again.
	DefaultMaxBackoff = time.Second
	// DefaultSilenceTimeout is how long the stream may bring nothing (no
	// change, heartbeat or keepalive; the feed asks for a keepalive once a
	// StatusInterval has passed in silence) before the connection is taken
	// for dead and replaced. A connection that a network partition cut stays
	// open on both sides; without this it resumed only when TCP's
	// retransmissions, backed off during the partition, got through, up to
	// tens of seconds after the network was back.
	DefaultSilenceTimeout = 5 * time.Second
	// replicationConnectTimeout bounds one attempt to open the replication
	// connection (the configured connect timeout when shorter), so an attempt
	// sent into a partition does not hold the next one back long after it heals.
	replicationConnectTimeout = 3 * time.Second
	// DefaultMaxFreshLag is the lag in time beyond which datasets report not fresh.
	DefaultMaxFreshLag = 5 * time.Second
	// DefaultMaxBatchChanges bounds the row changes of whole transactions applied in
	// one store transaction (a single larger transaction still applies whole).
	DefaultMaxBatchChanges = 100_000
	// DefaultApplyShare is the share of one core that a feed's store
	// transactions may take while changes stream (group commit, see
	// Feed.ApplyShare): a store transaction costs a handful of DuckDB
	// statements whatever it holds, so changes that arrive meanwhile are
	// applied together, and the cost per change falls as the rate rises.
	DefaultApplyShare = 0.05
	// DefaultMaxApplyWait caps the wait that ApplyShare puts between two store
	// transactions, and so what it adds to a change's time to visible.
	DefaultMaxApplyWait = 20 * time.Millisecond
)

// minBackoff is the first wait after a failure.
const minBackoff = 500 * time.Millisecond

// Log attribute keys.
const (
	logDataset = "dataset"
	logLSN     = "lsn"
	logSlot    = "slot"
)

// heartbeatPrefix marks the feed's heartbeat messages in the WAL.
const heartbeatPrefix = "spice_heartbeat"

// Engine is what a feed needs from the engine; *engine.Engine implements it.
type Engine interface {
	Apply(ctx context.Context, datasets []string, pos position.LSN, fn func(engine.StoreTx) error) error
	Advance(ctx context.Context, datasets []string, pos position.LSN) error
	SetFeedStatus(datasets []string, st engine.FeedStatus)
}

// Store is what a feed reads from the accelerator: the watermarks committed with
// the data, whether a table exists, and its own bookkeeping (which source columns
// each local table was loaded with, recorded by StoreTx.SetFingerprint).
// *duckdb.DB implements it.
type Store interface {
	Watermarks(ctx context.Context) (map[string]position.LSN, error)
	TableExists(ctx context.Context, table string) (bool, error)
	Fingerprints(ctx context.Context) (map[string]string, error)
}

// Feed follows one Postgres database by logical replication and keeps its
// datasets (refresh_mode: changes) exactly in step: an exact snapshot first, then
// every source transaction applied whole, with its commit position as watermark.
// It implements engine.Feed. Create it with New, adjust the exported fields, and
// register it with Engine.AddFeed; the engine calls Run.
type Feed struct {
	// Logger receives lifecycle events (snapshot, resume, reconnect); nil means
	// slog.Default().
	Logger *slog.Logger
	// Metrics, when set, receives lag, position and re-snapshot counts.
	Metrics *Metrics
	// Allocator backs the Arrow batches. Default memory.DefaultAllocator.
	Allocator memory.Allocator
	// HeartbeatInterval is how often a heartbeat is written and the source's
	// position polled (DefaultHeartbeatInterval when zero). A negative value
	// writes no heartbeat (polling every DefaultLagPollInterval): an idle source
	// then shows a growing lag in time, and the slot moves only on keepalives.
	HeartbeatInterval time.Duration
	// StatusInterval is how often applied positions are acknowledged
	// (DefaultStatusInterval when zero); Postgres's requests are answered at once.
	StatusInterval time.Duration
	// MaxBackoff caps the wait between reconnections (DefaultMaxBackoff when zero).
	MaxBackoff time.Duration
	// SilenceTimeout replaces a stream that brought nothing for that long
	// (DefaultSilenceTimeout when zero).
	SilenceTimeout time.Duration
	// MaxFreshLag is the lag in time beyond which datasets are not fresh
	// (DefaultMaxFreshLag when zero).
	MaxFreshLag time.Duration
	// MaxBatchChanges bounds how many row changes of several transactions are
	// applied together (DefaultMaxBatchChanges when zero).
	MaxBatchChanges int
	// ApplyShare bounds the share of one core the store transactions take
	// while changes stream: after a transaction that took d, the next one
	// starts no sooner than d*(1/ApplyShare-1) after it ended (at most
	// MaxApplyWait), and applies every whole source transaction that arrived
	// meanwhile. A change arriving after a quiet spell applies at once.
	// DefaultApplyShare when zero; 1 or more applies each batch as soon as the
	// previous one is done.
	ApplyShare float64
	// MaxApplyWait caps that wait (DefaultMaxApplyWait when zero).
	MaxApplyWait time.Duration

	cfg      Config
	eng      Engine
	store    Store
	datasets []string

	// Across sessions, owned by Run's goroutine.
	fingerprints map[string]string // dataset -> source columns its local table has
	owed         string            // reason of a new snapshot decided (and counted) but not yet taken

	// Shared with the session goroutines and status readers.
	applied   atomic.Uint64 // position applied and safe to acknowledge
	holdUntil atomic.Int64  // unix nanoseconds until which the applier holds its batch back (pacing)
	lastAt    atomic.Int64  // unix nanoseconds of the commit or heartbeat applied last
	serverLSN atomic.Uint64 // the source's pg_current_wal_lsn() at the last poll
	streaming atomic.Bool
	mu        sync.Mutex
	lastErr   error
}

var _ engine.Feed = (*Feed)(nil)

// New returns a feed for cfg that writes through eng and reads its bookkeeping
// from store.
func New(eng Engine, store Store, cfg Config) *Feed {
	return &Feed{
		Allocator: memory.DefaultAllocator,
		cfg:       cfg,
		eng:       eng,
		store:     store,
		datasets:  cfg.datasets(),
	}
}

// Datasets returns the names of the datasets the feed serves.
func (f *Feed) Datasets() []string { return f.datasets }

func (f *Feed) setDefaults() {
	if f.Logger == nil {
		f.Logger = slog.Default()
	}
	if f.Allocator == nil {
		f.Allocator = memory.DefaultAllocator
	}
	if f.HeartbeatInterval == 0 {
		f.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if f.StatusInterval <= 0 {
		f.StatusInterval = DefaultStatusInterval
	}
	if f.MaxBackoff <= 0 {
		f.MaxBackoff = DefaultMaxBackoff
	}
	if f.SilenceTimeout <= 0 {
		f.SilenceTimeout = DefaultSilenceTimeout
	}
	if f.MaxFreshLag <= 0 {
		f.MaxFreshLag = DefaultMaxFreshLag
	}
	if f.MaxBatchChanges <= 0 {
		f.MaxBatchChanges = DefaultMaxBatchChanges
	}
	if f.ApplyShare <= 0 {
		f.ApplyShare = DefaultApplyShare
	}
	if f.MaxApplyWait <= 0 {
		f.MaxApplyWait = DefaultMaxApplyWait
	}
}

// Run follows the source until ctx ends: it takes a snapshot or resumes, streams,
// and on any failure keeps the last data, reports not-fresh, and reconnects with
// back-off. On return a memory-mode feed drops its slot (nothing can resume from
// it); a file-mode feed keeps it for the next start.
func (f *Feed) Run(ctx context.Context) error {
	f.setDefaults()
	pc := f.cfg.Postgres.PoolConfig.Copy()
	pc.MaxConns = 3 // the snapshot, the heartbeat, catalog work
	pc.MinConns = 0
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return fmt.Errorf("change feed %s: open pool: %w", f.cfg.Slot, err)
	}
	defer pool.Close()
	defer f.shutdown(ctx)

	backoff := minBackoff
	for ctx.Err() == nil {
		began := time.Now()
		err := f.session(ctx, pool)
		if ctx.Err() != nil {
			break
		}
		// Whatever ended the session (a connection taken for dead, Postgres
		// restarting) may have ended the pool's idle connections too. A
		// partition leaves them open on this side: the next session's first
		// query would go into one and wait for TCP's retransmissions, backed off
		// during the outage, seconds after the network is back. Fresh ones cost
		// a connect.
		pool.Reset()
		var rs *resnapshotError
		if errors.As(err, &rs) {
			f.owe(rs.reason, rs.detail)
			continue
		}
		f.setErr(err)
		f.report()
		if time.Since(began) > f.MaxBackoff {
			backoff = minBackoff // it streamed for a while: this is a new outage
		}
		f.Logger.Warn("change feed failed; reconnecting", logSlot, f.cfg.Slot, "in", backoff, logging.ErrorKey, err)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, f.MaxBackoff)
	}
	return nil
}

// owe records that the next session must take a new snapshot, and says why.
func (f *Feed) owe(reason, detail string) {
	f.owed = reason
	f.Metrics.resnapshot(reason)
	f.Logger.Warn("cannot resume the change stream; taking a new snapshot", logSlot, f.cfg.Slot, "reason", reason, "detail", detail)
}

// shutdown drops a memory-mode feed's slot after the stream has closed.
func (f *Feed) shutdown(ctx context.Context) {
	f.streaming.Store(false)
	if f.cfg.File {
		return
	}
	if err := dropSlot(context.WithoutCancel(ctx), f.cfg.Postgres, f.cfg.Slot); err != nil {
		f.Logger.Warn("could not drop the replication slot of a memory-mode feed; drop it with `dataruntime drop-slots` or pg_drop_replication_slot, it holds WAL on the server",
			logSlot, f.cfg.Slot, logging.ErrorKey, err)
		return
	}
	f.Logger.Info("dropped replication slot", logSlot, f.cfg.Slot)
}

func (f *Feed) setErr(err error) {
	f.mu.Lock()
	f.lastErr = err
	f.mu.Unlock()
}

// report publishes freshness and lag to the engine and the metrics.
func (f *Feed) report() {
	applied := position.LSN(f.applied.Load())
	st := engine.FeedStatus{}
	if server := position.LSN(f.serverLSN.Load()); server != 0 && applied != 0 {
		lag := int64(0)
		if server > applied {
			lag = int64(server - applied)
		}
		st.LagBytes = &lag
	}
	if at := f.lastAt.Load(); at != 0 {
		lag := max(time.Since(time.Unix(0, at)).Seconds(), 0)
		st.LagSeconds = &lag
	}
	f.mu.Lock()
	st.Err = f.lastErr
	f.mu.Unlock()
	st.Fresh = f.streaming.Load() && st.Err == nil &&
		(f.HeartbeatInterval < 0 || st.LagSeconds != nil && *st.LagSeconds <= f.MaxFreshLag.Seconds())
	f.eng.SetFeedStatus(f.datasets, st)
	f.Metrics.observe(f.cfg.Slot, f.datasets, applied, st.LagBytes, st.LagSeconds)
}
