package cdc

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// session is one connection's life: describe the tables, make sure of the
// publication, snapshot or resume, then stream until something fails.
func (f *Feed) session(ctx context.Context, pool *pgxpool.Pool) error {
	tables := make([]*table, len(f.cfg.Tables))
	byOID := map[uint32]string{}
	for i, t := range f.cfg.Tables {
		ti, err := describe(ctx, pool, t)
		if err != nil {
			return err
		}
		if other, dup := byOID[ti.oid]; dup {
			return fmt.Errorf("datasets %s and %s both read %s with refresh_mode changes; keep one, or make the other a view over it", other, t.Dataset, ti.ident())
		}
		byOID[ti.oid] = t.Dataset
		tables[i] = ti
	}
	added, err := ensurePublication(ctx, pool, f.cfg.Publication, tables)
	if err != nil {
		return err
	}
	rconn, err := connectReplication(ctx, f.cfg.Postgres)
	if err != nil {
		return err
	}
	defer rconn.Close(context.WithoutCancel(ctx))
	start, tables, err := f.start(ctx, pool, rconn, tables, added)
	if err != nil {
		return err
	}
	return f.stream(ctx, pool, rconn, start, tables)
}

// start decides between resuming from the stored position and a new snapshot, and
// takes the snapshot when needed. It returns where to stream from.
func (f *Feed) start(ctx context.Context, pool *pgxpool.Pool, rconn *pgconn.PgConn, tables []*table, added bool) (position.LSN, []*table, error) {
	slot, err := readSlot(ctx, pool, f.cfg.Slot)
	if err != nil {
		return 0, nil, err
	}
	if slot.exists {
		if err := slot.check(f.cfg.Slot, f.cfg.Postgres.PoolConfig.ConnConfig.Database); err != nil {
			return 0, nil, err
		}
	}
	stored, reason, err := f.stored(ctx, tables)
	if err != nil {
		return 0, nil, err
	}
	switch {
	case f.owed != "":
		reason = "" // decided, logged and counted already
	case stored == 0 && reason == "":
		// First start (or mode: memory): nothing to resume, nothing lost.
	case reason != "":
	case added:
		reason = reasonPublication
	case !slot.exists:
		reason = reasonSlotMissing
	case slot.walStatus == "lost":
		reason = reasonSlotLost
	case slot.confirmed > stored:
		reason = reasonGap
	default:
		f.Logger.Info(fmt.Sprintf("resuming from %s", stored), logSlot, f.cfg.Slot, logLSN, stored.String())
		return stored, tables, nil
	}
	if reason != "" {
		f.owe(reason, fmt.Sprintf("datasets at %s, slot confirmed at %s, wal_status %q", stored, slot.confirmed, slot.walStatus))
	}
	pos, tables, err := f.snapshot(ctx, pool, rconn, tables, slot.exists)
	if err != nil {
		return 0, nil, err
	}
	f.owed = ""
	return pos, tables, nil
}

// stored returns the position all datasets reflect, as committed with their data,
// or a reason why they cannot resume from one. Zero with no reason means nothing
// is stored at all.
func (f *Feed) stored(ctx context.Context, tables []*table) (position.LSN, string, error) {
	if !f.cfg.File && f.fingerprints == nil {
		// mode: memory starts afresh, even in a store file that other datasets keep.
		return 0, "", nil
	}
	wms, err := f.store.Watermarks(ctx)
	if err != nil {
		return 0, "", err
	}
	var pos position.LSN
	for i, ds := range f.datasets {
		wm := wms[ds]
		if wm != 0 {
			exists, err := f.store.TableExists(ctx, ds)
			if err != nil {
				return 0, "", err
			}
			if !exists {
				wm = 0
			}
		}
		if i > 0 && wm != pos {
			return 0, reasonIncomplete, nil
		}
		pos = wm
	}
	if pos == 0 {
		return 0, "", nil
	}
	if f.fingerprints == nil {
		fps, err := readFingerprints(ctx, f.store)
		if err != nil {
			return 0, "", err
		}
		f.fingerprints = fps
	}
	for _, t := range tables {
		fp, ok := f.fingerprints[t.Dataset]
		switch {
		case !ok:
			return 0, reasonIncomplete, nil
		case fp != t.fingerprint:
			return 0, reasonSchema, nil
		}
	}
	return pos, "", nil
}

// snapshot creates the slot (dropping an old one), copies every table in the
// slot's exported snapshot into the store in one transaction stamped with the
// slot's consistent point, and returns that point: streaming from it continues
// exactly where the copy ends.
func (f *Feed) snapshot(ctx context.Context, pool *pgxpool.Pool, rconn *pgconn.PgConn, tables []*table, exists bool) (position.LSN, []*table, error) {
	if exists {
		if err := dropSlot(ctx, f.cfg.Postgres, f.cfg.Slot); err != nil {
			return 0, nil, err
		}
	}
	began := time.Now()
	pos, name, err := createSlot(ctx, rconn, f.cfg.Slot)
	if err != nil {
		return 0, nil, err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, nil, fmt.Errorf("snapshot: %w", err)
	}
	defer conn.Release() // a connection left in a transaction is destroyed, not reused
	if _, err := conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return 0, nil, fmt.Errorf("snapshot: %w", err)
	}
	if _, err := conn.Exec(ctx, "SET TRANSACTION SNAPSHOT "+quoteLiteral(name)); err != nil {
		return 0, nil, fmt.Errorf("snapshot: import %s: %w", name, err)
	}
	// Describe again inside the snapshot, so the columns recorded are those copied.
	snap := make([]*table, len(tables))
	for i, t := range tables {
		if snap[i], err = describe(ctx, conn.Conn(), t.Table); err != nil {
			return 0, nil, err
		}
	}
	var rows int64
	err = f.eng.Apply(ctx, f.datasets, pos, func(tx engine.StoreTx) error {
		for _, t := range snap {
			n, err := f.copyTable(ctx, tx, t, conn.Conn())
			if err != nil {
				return err
			}
			rows += n
		}
		return writeFingerprints(tx, snap)
	})
	if err != nil {
		return 0, nil, fmt.Errorf("snapshot: %w", err)
	}
	if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
		return 0, nil, fmt.Errorf("snapshot: %w", err)
	}
	f.fingerprints = map[string]string{}
	for _, t := range snap {
		f.fingerprints[t.Dataset] = t.fingerprint
	}
	f.lastAt.Store(began.UnixNano())
	f.Logger.Info("snapshot taken", logSlot, f.cfg.Slot, logLSN, pos.String(), "rows", rows, "took", time.Since(began).Round(time.Millisecond))
	return pos, snap, nil
}

// copyTable replaces the dataset's local table with the table's rows as the
// snapshot sees them.
func (f *Feed) copyTable(ctx context.Context, tx engine.StoreTx, t *table, conn *pgx.Conn) (int64, error) {
	cols := make([]string, len(t.cols))
	for i, c := range t.cols {
		cols[i] = c.name
	}
	var n int64
	err := postgres.ScanTx(ctx, conn, f.cfg.Postgres, t.ident(), engine.ScanRequest{Columns: cols}, f.Allocator,
		func(rd array.RecordReader) error {
			var err error
			n, err = tx.Replace(t.Dataset, rd)
			return err
		})
	if err != nil {
		return 0, fmt.Errorf("copy %s: %w", t.ident(), err)
	}
	return n, nil
}

func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
