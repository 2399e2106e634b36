package cdc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres"
)

// DefaultSettle is how long DropInactive watches a slot before it drops it.
const DefaultSettle = 10 * time.Second

// DropInactive drops the replication slots of cfg's database whose names start
// with prefix (Name(pod, "", "")+"_": the slots of a spicepod's replicas) and
// that no process streams from, with the publications of the same names, and
// the publications of the prefix that have no slot at all. It is
// the clean-up after replicas that are gone (`dataruntime drop-slots
// --inactive`): their slots hold WAL on the server for ever.
//
// A live replica's slot is never dropped on purpose: a slot is a candidate only
// when it is inactive twice, settle apart, without its confirmed position moving
// (a replica reconnecting after a failure is back within its backoff), and
// Postgres itself refuses to drop a slot that has become active since. It
// returns the names dropped (slots, then publications without a slot).
func DropInactive(ctx context.Context, cfg postgres.Config, prefix string, settle time.Duration) ([]string, error) {
	if prefix == "" {
		return nil, errors.New("drop inactive slots: empty prefix would match every slot")
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.PoolConfig.ConnConfig)
	if err != nil {
		return nil, fmt.Errorf("drop inactive slots: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	first, err := inactiveSlots(ctx, conn, prefix)
	if err != nil {
		return nil, err
	}
	firstPubs, err := orphanPublications(ctx, conn, prefix)
	if err != nil || len(first)+len(firstPubs) == 0 {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(settle):
	}
	second, err := inactiveSlots(ctx, conn, prefix)
	if err != nil {
		return nil, err
	}
	secondPubs, err := orphanPublications(ctx, conn, prefix)
	if err != nil {
		return nil, err
	}
	var dropped []string
	var errs []error
	for _, s := range second {
		if !slices.Contains(first, s) {
			continue // became inactive meanwhile, or its position moved: maybe a live replica
		}
		if _, err := conn.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, s.name); err != nil {
			errs = append(errs, fmt.Errorf("drop replication slot %s: %w", s.name, err))
			continue
		}
		if _, err := conn.Exec(ctx, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{s.name}.Sanitize()); err != nil {
			errs = append(errs, fmt.Errorf("drop publication %s: %w", s.name, err))
		}
		dropped = append(dropped, s.name)
	}
	// A publication without a slot is what a clean shutdown leaves (memory mode
	// drops its slot only); one that stays so is no replica's being set up.
	for _, pub := range secondPubs {
		if !slices.Contains(firstPubs, pub) {
			continue
		}
		if _, err := conn.Exec(ctx, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{pub}.Sanitize()); err != nil {
			errs = append(errs, fmt.Errorf("drop publication %s: %w", pub, err))
			continue
		}
		dropped = append(dropped, pub)
	}
	return dropped, errors.Join(errs...)
}

// orphanPublications lists the publications with the prefix and no slot of
// the same name.
func orphanPublications(ctx context.Context, conn *pgx.Conn, prefix string) ([]string, error) {
	rows, err := conn.Query(ctx, `SELECT pubname FROM pg_publication
		WHERE starts_with(pubname, $1)
		AND pubname NOT IN (SELECT slot_name FROM pg_replication_slots)
		ORDER BY pubname`, prefix)
	if err != nil {
		return nil, fmt.Errorf("list publications without a slot: %w", err)
	}
	pubs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list publications without a slot: %w", err)
	}
	return pubs, nil
}

type staleSlot struct{ name, confirmed string }

func inactiveSlots(ctx context.Context, conn *pgx.Conn, prefix string) ([]staleSlot, error) {
	rows, err := conn.Query(ctx, `SELECT slot_name, coalesce(confirmed_flush_lsn::text, '')
		FROM pg_replication_slots
		WHERE database = current_database() AND starts_with(slot_name, $1) AND NOT active
		ORDER BY slot_name`, prefix)
	if err != nil {
		return nil, fmt.Errorf("list inactive replication slots: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (staleSlot, error) {
		var s staleSlot
		err := r.Scan(&s.name, &s.confirmed)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("list inactive replication slots: %w", err)
	}
	return out, nil
}
