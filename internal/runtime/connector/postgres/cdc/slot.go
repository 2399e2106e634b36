package cdc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres"
)

// dropTimeout bounds the wait for a slot to be released before it is dropped.
const dropTimeout = 10 * time.Second

// slotInfo is a row of pg_replication_slots.
type slotInfo struct {
	exists    bool
	plugin    string
	database  string
	walStatus string       // reserved, extended, unreserved or lost
	confirmed position.LSN // confirmed_flush_lsn
	activePID int32        // 0 when inactive
}

func readSlot(ctx context.Context, q querier, slot string) (slotInfo, error) {
	var s slotInfo
	var plugin, database, status, confirmed *string
	var pid *int32
	err := q.QueryRow(ctx, `SELECT plugin, database, wal_status, confirmed_flush_lsn::text, active_pid
		FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&plugin, &database, &status, &confirmed, &pid)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("look up replication slot %s: %w", slot, err)
	}
	s.exists = true
	s.plugin, s.database, s.walStatus = deref(plugin), deref(database), deref(status)
	if confirmed != nil {
		if s.confirmed, err = position.Parse(*confirmed); err != nil {
			return s, err
		}
	}
	if pid != nil {
		s.activePID = *pid
	}
	return s, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// check refuses a slot that is not a pgoutput slot of this database.
func (s slotInfo) check(slot, database string) error {
	if s.database != database || s.plugin != "pgoutput" {
		return fmt.Errorf("replication slot %s belongs to database %q with plugin %q, not to this feed (database %q, pgoutput): choose another pg_replication_slot or %s",
			slot, s.database, s.plugin, database, EnvInstance)
	}
	return nil
}

// connectReplication opens a logical replication connection (replication=database).
func connectReplication(ctx context.Context, cfg postgres.Config) (*pgconn.PgConn, error) {
	cc := cfg.PoolConfig.ConnConfig.Config.Copy()
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	cc.RuntimeParams["replication"] = "database"
	if cc.ConnectTimeout <= 0 || cc.ConnectTimeout > replicationConnectTimeout {
		cc.ConnectTimeout = replicationConnectTimeout
	}
	conn, err := pgconn.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("open replication connection to %s/%s: %w%s", cc.Host, cc.Database, err, replicationAdvice(err))
	}
	return conn, nil
}

// replicationAdvice says what to change when the server refuses replication.
func replicationAdvice(err error) string {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return ""
	}
	switch pgErr.Code {
	case "28P01":
		return "; " + postgres.PasswordAdvice
	case "42501", "28000":
		return "; the user needs the REPLICATION attribute (ALTER ROLE ... REPLICATION) or superuser, and pg_hba.conf must allow its connections"
	case "55000":
		return "; set wal_level = logical on the server (postgresql.conf or -c wal_level=logical) and restart it"
	case "53400":
		return "; the server has no free replication slot or WAL sender: raise max_replication_slots and max_wal_senders, or drop unused slots"
	case "55006":
		return fmt.Sprintf("; another process streams from this slot: give each runtime its own %s or pg_replication_slot", EnvInstance)
	}
	return ""
}

// createSlot creates the slot and exports the snapshot at its consistent point. The
// snapshot can be imported only while conn stays open and idle.
func createSlot(ctx context.Context, conn *pgconn.PgConn, slot string) (position.LSN, string, error) {
	res, err := pglogrepl.CreateReplicationSlot(ctx, conn, slot, "pgoutput", pglogrepl.CreateReplicationSlotOptions{
		Mode:           pglogrepl.LogicalReplication,
		SnapshotAction: "EXPORT_SNAPSHOT",
	})
	if err != nil {
		return 0, "", fmt.Errorf("create replication slot %s: %w%s", slot, err, replicationAdvice(err))
	}
	lsn, err := position.Parse(res.ConsistentPoint)
	if err != nil {
		return 0, "", fmt.Errorf("create replication slot %s: %w", slot, err)
	}
	return lsn, res.SnapshotName, nil
}

// dropSlot drops the slot, waiting a bounded time for a stream that is going away
// (our own previous connection) to release it.
func dropSlot(ctx context.Context, cfg postgres.Config, slot string) error {
	ctx, cancel := context.WithTimeout(ctx, dropTimeout)
	defer cancel()
	conn, err := connectReplication(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	err = pglogrepl.DropReplicationSlot(ctx, conn, slot, pglogrepl.DropReplicationSlotOptions{Wait: true})
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &pgErr) && pgErr.Code == "42704": // undefined_object: already gone
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("drop replication slot %s: %w: still active after %s; is another runtime using it? give each its own %s or pg_replication_slot",
			slot, ErrSlotInUse, dropTimeout, EnvInstance)
	}
	return fmt.Errorf("drop replication slot %s: %w", slot, err)
}

// Dropped says what Drop found and dropped.
type Dropped struct {
	Slot, Publication bool
}

// Drop removes the replication slot and the publication a runtime owns (the
// `dataruntime drop-slots` command) and says which of them existed. Either may
// be missing already. A slot that a running runtime streams from is not
// dropped: the error wraps ErrSlotInUse.
func Drop(ctx context.Context, cfg postgres.Config, slot, publication string) (Dropped, error) {
	var d Dropped
	conn, err := pgx.ConnectConfig(ctx, cfg.PoolConfig.ConnConfig)
	if err != nil {
		return d, fmt.Errorf("drop slot %s: connect: %w", slot, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	s, err := readSlot(ctx, conn, slot)
	if err != nil {
		return d, err
	}
	if s.exists {
		if s.activePID != 0 {
			return d, fmt.Errorf("drop replication slot %s: %w by process %d: stop the runtime that streams from it first", slot, ErrSlotInUse, s.activePID)
		}
		if _, err := conn.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, slot); err != nil {
			return d, fmt.Errorf("drop replication slot %s: %w", slot, err)
		}
		d.Slot = true
	}
	if publication == "" {
		return d, nil
	}
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)`, publication).Scan(&d.Publication); err != nil {
		return d, fmt.Errorf("look up publication %s: %w", publication, err)
	}
	if _, err := conn.Exec(ctx, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{publication}.Sanitize()); err != nil {
		return d, fmt.Errorf("drop publication %s: %w", publication, err)
	}
	return d, nil
}
