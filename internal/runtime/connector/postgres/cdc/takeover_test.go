//go:build duckdb_arrow

package cdc_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
)

// A file-mode runtime that comes back while its slot is still held by a
// connection that sends nothing (as our own connection is after a network
// partition, until Postgres's wal_sender_timeout of a minute) ends that
// connection and streams again, instead of waiting for Postgres to.
func TestSilentSlotHolderIsTakenOver(t *testing.T) {
	dsn := pg.NewDatabase(t)
	mustExec(t, dsn, recipeSchema...)
	mustExec(t, dsn, `INSERT INTO products VALUES (1, 'a')`, `INSERT INTO orders (product_id, count) VALUES (1, 1)`)
	path := filepath.Join(t.TempDir(), "sample.duckdb")
	r := startRuntime(t, pod(dsn, "file"), path, nil)
	r.wait(t, currentLSN(t, dsn))
	slot, publication := r.cfg.Slot, r.cfg.Publication
	r.stop(t) // file mode: the slot stays

	// The silent holder: it starts replication and then neither reads nor
	// acknowledges anything.
	ctx := context.Background()
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	holder, err := pgconn.Connect(ctx, dsn+sep+"replication=database")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Close(context.Background()) })
	if err := pglogrepl.StartReplication(ctx, holder, slot, 0, pglogrepl.StartReplicationOptions{
		Mode: pglogrepl.LogicalReplication, PluginArgs: []string{"proto_version '1'", "publication_names '" + publication + "'"},
	}); err != nil {
		t.Fatal(err)
	}
	held := slotOf(t, dsn, slot)
	if !held.active {
		t.Fatalf("slot %+v: want it held by the silent connection", held)
	}

	mustExec(t, dsn, `INSERT INTO orders (product_id, count) VALUES (1, 2)`)
	r = startRuntime(t, pod(dsn, "file"), path, nil)
	r.wait(t, currentLSN(t, dsn))
	if now := slotOf(t, dsn, slot); !now.active || now.pid == held.pid {
		t.Errorf("slot %+v after the restart: want it streamed by another process than %s", now, held.pid)
	}
	if !strings.Contains(r.log.String(), "ended the silent connection") {
		t.Errorf("the log does not say it ended the silent holder:\n%s", r.log.String())
	}
}
