package cdc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqrs-spice/cqrs/internal/logging"
)

// A slot is often still held, when the feed comes back, by our own previous
// connection that Postgres has not noticed is dead: after a network partition
// (the walsender keeps writing into a connection that only TCP's backed-off
// retransmissions will end) or a SIGKILL of the runtime whose host vanished.
// Postgres ends such a walsender by itself only after wal_sender_timeout (60 s
// by default). The feed instead ends it at once when its holder has not
// acknowledged anything for staleHolderAfter: a live feed acknowledges every
// StatusInterval (a second), so a holder that silent is a dead connection, not
// another runtime streaming.

// staleHolderAfter is how long the slot's holder must have been silent.
const staleHolderAfter = 5 * time.Second

// releaseWait bounds the wait for a terminated holder to let go of the slot.
const releaseWait = 3 * time.Second

// inUse reports whether err is Postgres refusing a slot another process holds.
func inUse(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55006" // object_in_use
}

// releaseStale terminates the walsender holding the feed's slot when it has
// been silent for staleHolderAfter, and waits until the slot is free. It
// reports whether it freed the slot; it fails only when ctx ends.
func (f *Feed) releaseStale(ctx context.Context, pool *pgxpool.Pool) bool {
	ctx, cancel := context.WithTimeout(ctx, releaseWait+3*time.Second) // the pool may hold dead connections too
	defer cancel()
	var pid int32
	err := pool.QueryRow(ctx, `SELECT s.active_pid FROM pg_replication_slots s
JOIN pg_stat_replication r ON r.pid = s.active_pid
WHERE s.slot_name = $1
  AND coalesce(r.reply_time, r.backend_start) < now() - make_interval(secs => $2)`,
		f.cfg.Slot, staleHolderAfter.Seconds()).Scan(&pid)
	if err != nil {
		return false // no silent holder (or we cannot see one): the usual backoff
	}
	var ok bool
	if err := pool.QueryRow(ctx, `SELECT pg_terminate_backend($1)`, pid).Scan(&ok); err != nil || !ok {
		f.Logger.Warn("cannot end the silent connection that holds the replication slot; waiting for Postgres to (wal_sender_timeout)",
			logSlot, f.cfg.Slot, "pid", pid, logging.ErrorKey, err)
		return false
	}
	f.Logger.Info("ended the silent connection that held the replication slot (a previous connection of ours that died)",
		logSlot, f.cfg.Slot, "pid", pid, "silent_for_at_least", staleHolderAfter)
	// A terminated walsender first tries to send its FATAL to the client, and
	// on a dead connection that send blocks; another signal interrupts it, so
	// the signal is repeated while the slot stays active.
	deadline := time.Now().Add(releaseWait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
		var active bool
		if err := pool.QueryRow(ctx, `SELECT active_pid IS NOT DISTINCT FROM $2::int AND active FROM pg_replication_slots WHERE slot_name = $1`,
			f.cfg.Slot, pid).Scan(&active); err == nil && !active {
			return true
		}
		_, _ = pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid)
	}
	return false
}

// startReplication runs start; when the slot is held by a silent connection,
// it ends that connection and runs start once more.
func (f *Feed) startReplication(ctx context.Context, pool *pgxpool.Pool, start func() error) error {
	err := start()
	if err == nil || !inUse(err) || !f.releaseStale(ctx, pool) {
		return err
	}
	if err := start(); err != nil {
		return fmt.Errorf("after ending the silent holder: %w", err)
	}
	return nil
}
