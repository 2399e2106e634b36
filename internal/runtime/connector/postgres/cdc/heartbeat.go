package cdc

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// The heartbeat is a non-transactional logical decoding message carrying the
// source's clock. It flows through the slot like a commit, so an idle database
// still moves the slot (no WAL piles up behind it) and the datasets' watermark and
// lag in time stay true. The same query reads pg_current_wal_lsn() for the lag in
// bytes.
const (
	heartbeatSQL = `SELECT pg_logical_emit_message(false, $1,
		to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))::text, pg_current_wal_lsn()::text`
	currentLSNSQL = `SELECT '', pg_current_wal_lsn()::text`
)

// probe writes a heartbeat and polls the source's position every
// HeartbeatInterval. Failures are logged, not fatal: the stream itself notices a
// source that went away.
func (f *Feed) probe(ctx context.Context, pool *pgxpool.Pool) error {
	interval, query := f.HeartbeatInterval, heartbeatSQL
	if interval < 0 {
		interval, query = DefaultLagPollInterval, currentLSNSQL
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		var msg, cur string
		var args []any
		if query == heartbeatSQL {
			args = []any{heartbeatPrefix}
		}
		err := pool.QueryRow(ctx, query, args...).Scan(&msg, &cur)
		var pgErr *pgconn.PgError
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.As(err, &pgErr) && pgErr.Code == "42501" && query == heartbeatSQL:
			f.Logger.Warn("cannot write heartbeats (pg_logical_emit_message needs superuser or the REPLICATION attribute); an idle source now shows a growing lag in time and the slot moves only with keepalives",
				logSlot, f.cfg.Slot, logging.ErrorKey, err)
			query = currentLSNSQL
			continue
		case err != nil:
			f.Logger.Debug("heartbeat failed", logSlot, f.cfg.Slot, logging.ErrorKey, err)
			continue
		}
		if lsn, err := position.Parse(cur); err == nil {
			f.serverLSN.Store(uint64(lsn))
		}
		f.report()
	}
}

// heartbeatTime reads the source time a heartbeat carries; zero if unreadable.
func heartbeatTime(content []byte) time.Time {
	t, err := time.Parse(time.RFC3339Nano, string(content))
	if err != nil {
		return time.Time{}
	}
	return t
}
