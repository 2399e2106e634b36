//go:build duckdb_arrow

package cdc_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres/cdc"
)

// A file-mode runtime that stops keeps its slot; started again while the writers
// go on, it resumes from the stored position without a new snapshot.
func TestFileModeResumesAfterRestart(t *testing.T) {
	dsn := pg.NewDatabase(t)
	seedRecipe(t, dsn)
	path := filepath.Join(t.TempDir(), "sample.duckdb")
	w := startWriters(t, dsn, 2)

	r := startRuntime(t, pod(dsn, "file"), path, nil)
	r.wait(t, currentLSN(t, dsn))
	w.waitOps(t, 300)
	r.stop(t)
	if !slotOf(t, dsn, r.cfg.Slot).exists {
		t.Fatal("the slot of a file-mode runtime is gone after a clean stop")
	}
	w.waitOps(t, 300) // written while the runtime is down

	r = startRuntime(t, pod(dsn, "file"), path, nil)
	w.waitOps(t, 300)
	r.wait(t, w.stop(t, dsn))
	mustMatchRecipe(t, r, dsn)
	mustResume(t, r)
}

// mustResume checks that the runtime resumed instead of taking a snapshot.
func mustResume(tb testing.TB, r *runtime) {
	tb.Helper()
	log := r.log.String()
	if !strings.Contains(log, "resuming from") {
		tb.Errorf("the log does not show a resume:\n%s", log)
	}
	if strings.Contains(log, "snapshot taken") {
		tb.Errorf("the log shows a snapshot, want a resume:\n%s", log)
	}
	if got := resnapshots(tb, r.reg); len(got) != 0 {
		tb.Errorf("resnapshots=%v, want none", got)
	}
}

// TestHelperRuntime is not a test: run as a child process (helperEnv set), it
// serves a file-mode runtime until it is killed.
func TestHelperRuntime(t *testing.T) {
	dsn := os.Getenv(helperEnv)
	if dsn == "" {
		t.Skip("runs only as the helper process of TestFileModeResumesAfterKill")
	}
	startRuntime(t, pod(dsn, "file"), os.Getenv("CDC_HELPER_PATH"), nil)
	select {}
}

// SIGKILL mid-stream: the runtime gets no chance to clean up. Started again on
// the same file, it resumes from the position stored with the data and is equal
// again; nothing is lost or applied twice.
func TestFileModeResumesAfterKill(t *testing.T) {
	dsn := pg.NewDatabase(t)
	seedRecipe(t, dsn)
	path := filepath.Join(t.TempDir(), "sample.duckdb")
	w := startWriters(t, dsn, 2)

	child := exec.Command(os.Args[0], "-test.run=^TestHelperRuntime$")
	child.Env = append(os.Environ(), helperEnv+"="+dsn, "CDC_HELPER_PATH="+path)
	child.Stdout, child.Stderr = os.Stderr, os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	slot := cdc.Name("sample", "test", "")
	mark := currentLSN(t, dsn)
	waitFor(t, "the child to stream", func() bool {
		s := slotOf(t, dsn, slot)
		return s.active && s.confirmed > mark
	})
	w.waitOps(t, 300)
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	w.waitOps(t, 300)

	r := startRuntime(t, pod(dsn, "file"), path, nil)
	w.waitOps(t, 300)
	r.wait(t, w.stop(t, dsn))
	mustMatchRecipe(t, r, dsn)
	mustResume(t, r)
}

// A slot dropped while the runtime is down, or one that has moved past the stored
// position, cannot be resumed from: the runtime takes a new snapshot, says so,
// counts it, and is equal again.
func TestResnapshotWhenSlotCannotResume(t *testing.T) {
	for _, tc := range []struct {
		reason   string
		breakSQL string // run while the runtime is down; %s is the slot
	}{
		{"slot_missing", `SELECT pg_drop_replication_slot('%s')`},
		{"gap", `SELECT pg_replication_slot_advance('%s', pg_current_wal_lsn())`},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			dsn := pg.NewDatabase(t)
			seedRecipe(t, dsn)
			path := filepath.Join(t.TempDir(), "sample.duckdb")
			r := startRuntime(t, pod(dsn, "file"), path, nil)
			r.wait(t, currentLSN(t, dsn))
			r.stop(t)

			mustExec(t, dsn, `INSERT INTO orders (product_id, count) SELECT 1 + i % 20, 5 FROM generate_series(1, 1000) i`,
				`DELETE FROM orders WHERE id % 7 = 3`)
			mustExec(t, dsn, strings.ReplaceAll(tc.breakSQL, "%s", r.cfg.Slot))
			mustExec(t, dsn, `UPDATE orders SET count = count + 1 WHERE id % 7 = 0`)

			r = startRuntime(t, pod(dsn, "file"), path, nil)
			r.wait(t, currentLSN(t, dsn))
			mustMatchRecipe(t, r, dsn)
			if got := resnapshots(t, r.reg)[tc.reason]; got != 1 {
				t.Errorf("cdc_resnapshots_total{reason=%q}=%v, want 1", tc.reason, got)
			}
			if !strings.Contains(r.log.String(), "taking a new snapshot") {
				t.Errorf("the log does not say why it took a new snapshot:\n%s", r.log.String())
			}
		})
	}
}

// With no writes for longer than wal_sender_timeout the stream stays up (the same
// walsender), and the slot's confirmed position keeps moving thanks to the
// heartbeat, as does the datasets' watermark.
func TestIdleStreamStaysUpAndMovesTheSlot(t *testing.T) {
	admin := pg.Get(t).DSN
	mustExec(t, admin, `ALTER SYSTEM SET wal_sender_timeout = '2s'`, `SELECT pg_reload_conf()`)
	t.Cleanup(func() { mustExec(t, admin, `ALTER SYSTEM RESET wal_sender_timeout`, `SELECT pg_reload_conf()`) })
	dsn := pg.NewDatabase(t)
	mustExec(t, dsn, recipeSchema...)
	mustExec(t, dsn, `INSERT INTO products VALUES (1, 'a')`, `INSERT INTO orders (product_id, count) VALUES (1, 1)`)
	r := startRuntime(t, pod(dsn, "memory"), "", nil)
	r.wait(t, currentLSN(t, dsn))

	before := slotOf(t, dsn, r.cfg.Slot)
	wm, _ := r.eng.Watermark("orders")
	time.Sleep(3 * 2 * time.Second) // idle for three wal_sender_timeouts
	after := slotOf(t, dsn, r.cfg.Slot)
	if !after.active || after.pid != before.pid {
		t.Fatalf("slot before %+v, after %+v: want the same walsender still streaming", before, after)
	}
	waitFor(t, "the slot to move while idle", func() bool { return slotOf(t, dsn, r.cfg.Slot).confirmed > before.confirmed })
	waitFor(t, "the watermark to move while idle", func() bool { w, _ := r.eng.Watermark("orders"); return w > wm })
	st, err := r.eng.StatusOf(context.Background(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Fresh || st.LagSeconds == nil || st.LagBytes == nil {
		t.Fatalf("status %+v: want fresh with lag reported", st)
	}
	if got := gauge(t, r.reg, "cdc_lag_seconds", "dataset", "orders"); got < 0 {
		t.Fatal("cdc_lag_seconds{dataset=orders} is not exported")
	}
}

// A memory-mode runtime drops its slot on a clean shutdown; a file-mode one keeps
// it, and cdc.Drop removes it and the publication, saying what it found.
func TestShutdownAndDropLeaveNoSlot(t *testing.T) {
	dsn := pg.NewDatabase(t)
	mustExec(t, dsn, recipeSchema...)

	r := startRuntime(t, pod(dsn, "memory"), "", nil)
	r.wait(t, currentLSN(t, dsn))
	r.stop(t)
	if s := slotOf(t, dsn, r.cfg.Slot); s.exists {
		t.Fatalf("memory mode left slot %s behind: %+v", r.cfg.Slot, s)
	}

	r = startRuntime(t, pod(dsn, "file"), filepath.Join(t.TempDir(), "sample.duckdb"), nil)
	r.wait(t, currentLSN(t, dsn))
	ctx := context.Background()
	if _, err := cdc.Drop(ctx, r.cfg.Postgres, r.cfg.Slot, r.cfg.Publication); err == nil {
		t.Fatal("Drop of a slot in use succeeded")
	}
	r.stop(t)
	if !slotOf(t, dsn, r.cfg.Slot).exists {
		t.Fatal("file mode dropped its slot on a clean shutdown")
	}
	if d, err := cdc.Drop(ctx, r.cfg.Postgres, r.cfg.Slot, r.cfg.Publication); err != nil || d != (cdc.Dropped{Slot: true, Publication: true}) {
		t.Fatalf("Drop: %+v, %v; want both dropped", d, err)
	}
	if s := slotOf(t, dsn, r.cfg.Slot); s.exists {
		t.Fatalf("Drop left slot %s behind", r.cfg.Slot)
	}
	if got := pgRows(t, dsn, `SELECT pubname FROM pg_publication`); len(got) != 0 {
		t.Fatalf("Drop left publications %v behind", got)
	}
	if d, err := cdc.Drop(ctx, r.cfg.Postgres, r.cfg.Slot, r.cfg.Publication); err != nil || d != (cdc.Dropped{}) {
		t.Fatalf("Drop of nothing: %+v, %v; want nothing dropped", d, err)
	}
}

// Postgres going away keeps the last data served, reported not fresh with the
// error; when it is back, the feed reconnects and catches up.
func TestReconnectsAfterPostgresRestart(t *testing.T) {
	dsn := pg.NewDatabase(t)
	seedRecipe(t, dsn)
	r := startRuntime(t, pod(dsn, "memory"), "", func(f *cdc.Feed) { f.MaxBackoff = time.Second })
	r.wait(t, currentLSN(t, dsn))

	ctx := context.Background()
	pg := pg.Get(t)
	if err := pg.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = pg.Start(ctx)
		}
	})
	waitFor(t, "the feed to report the outage", func() bool {
		st, _ := r.eng.StatusOf(ctx, "orders")
		return !st.Fresh && st.LastError != ""
	})
	if got := r.rows(t, `SELECT count(*) FROM orders`); got[0] != "100000" {
		t.Fatalf("while Postgres is down: count=%v, want the last data (100000)", got)
	}
	if err := pg.Start(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	waitFor(t, "Postgres to accept connections", func() bool {
		conn, err := pgConnect(dsn)
		if err == nil {
			conn.Close(ctx)
		}
		return err == nil
	})
	mustExec(t, dsn, `DELETE FROM orders WHERE id <= 10`, `INSERT INTO products VALUES (21, 'new')`, `INSERT INTO orders (product_id, count) VALUES (21, 1)`)
	r.wait(t, currentLSN(t, dsn))
	mustMatchRecipe(t, r, dsn)
	waitFor(t, "fresh again", func() bool { st, _ := r.eng.StatusOf(ctx, "orders"); return st.Fresh })
}
