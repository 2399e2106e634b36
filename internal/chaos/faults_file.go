package chaos

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Names of the faults that need more than the default stack.
const (
	FaultKillAcceleratedFile = "kill-accelerated-file"
	FaultSlotInvalidatedFile = "slot-invalidated-file"
	FaultDiskFullFile        = "disk-full-file"
	FaultKillSnapshotFile    = "kill-snapshot-file"
	FaultKillSnapshotMemory  = "kill-snapshot-memory"
	serviceDisk              = "accelerated-disk"
	diskFullHold             = 15 * time.Second
	snapshotKillLimit        = 2 * time.Minute
	seedChunk                = 200_000
)

func fileFaults(set Settings, readSide []string) []Fault {
	return []Fault{
		{
			Name:        FaultKillAcceleratedFile,
			Description: "SIGKILL the accelerated runtime in mode: file while changes stream; it resumes from its stored position",
			Mode:        ModeFile,
			Allowed:     readSide,
			Inject:      killService(ServiceAccelerated),
			Heal:        startService(ServiceAccelerated),
			Restarts:    ServiceAccelerated,
		},
		{
			Name: FaultSlotInvalidatedFile,
			Description: "SIGKILL the accelerated runtime in mode: file, let Postgres invalidate its slot " +
				"(max_slot_wal_keep_size 1MB, WAL written, checkpoint), start it: it must take a new snapshot",
			Mode:     ModeFile,
			Allowed:  readSide,
			Inject:   invalidateSlot,
			Heal:     startService(ServiceAccelerated),
			Restarts: ServiceAccelerated,
		},
		{
			Name: FaultDiskFullFile,
			Description: fmt.Sprintf("fill the tmpfs volume of the accelerated runtime in mode: file for %s while orders flow, "+
				"then free it", diskFullHold),
			Mode:    ModeFile,
			Allowed: readSide,
			Inject:  fillDisk,
			Hold:    diskFullHold,
			Heal:    freeDisk,
		},
		{
			Name: FaultKillSnapshotFile,
			Description: fmt.Sprintf("with %d orders seeded, stop the accelerated runtime in mode: file, delete its DuckDB file, "+
				"start it and SIGKILL it during its initial snapshot (the file half written)", set.Seed),
			Mode:     ModeFile,
			Allowed:  readSide,
			Prepare:  seeder(set.Seed),
			Inject:   killDuringSnapshot(true),
			Heal:     startService(ServiceAccelerated),
			Restarts: ServiceAccelerated,
		},
		{
			Name:        FaultKillSnapshotMemory,
			Description: fmt.Sprintf("with %d orders seeded, SIGKILL the accelerated runtime in mode: memory during its initial snapshot", set.Seed),
			Mode:        ModeMemory,
			Allowed:     readSide,
			Prepare:     seeder(set.Seed),
			Inject:      killDuringSnapshot(false),
			Heal:        startService(ServiceAccelerated),
			Restarts:    ServiceAccelerated,
		},
	}
}

// invalidateSlot stops the runtime, then makes Postgres invalidate its slot.
func invalidateSlot(ctx context.Context, e *Env) error {
	if err := killService(ServiceAccelerated)(ctx, e); err != nil {
		return err
	}
	steps := []string{
		`ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'`,
		`SELECT pg_reload_conf()`,
		`CREATE TABLE IF NOT EXISTS chaos_filler (x int)`,
	}
	for _, sql := range steps {
		if _, err := e.SQL(ctx, sql); err != nil {
			return err
		}
	}
	defer func() {
		for _, sql := range []string{`ALTER SYSTEM RESET max_slot_wal_keep_size`, `SELECT pg_reload_conf()`, `DROP TABLE IF EXISTS chaos_filler`} {
			_, _ = e.SQL(context.Background(), sql)
		}
	}()
	for range 20 {
		for _, sql := range []string{`INSERT INTO chaos_filler SELECT generate_series(1, 100000)`, `SELECT pg_switch_wal()`, `CHECKPOINT`} {
			if _, err := e.SQL(ctx, sql); err != nil {
				return err
			}
		}
		out, err := e.SQL(ctx, `SELECT string_agg(slot_name || '=' || coalesce(wal_status, ''), ',') FROM pg_replication_slots WHERE slot_name LIKE '%accelerated%'`)
		if err != nil {
			return err
		}
		if strings.Contains(out, "=lost") {
			return nil
		}
	}
	return fmt.Errorf("the slot was not invalidated after writing WAL and checkpointing 20 times")
}

func fillDisk(ctx context.Context, e *Env) error {
	// dd stops with "No space left on device": the aim.
	out, _ := e.Exec(ctx, serviceDisk, "dd", "if=/dev/zero", "of=/data/chaos-filler", "bs=1M")
	if !strings.Contains(out, "No space left") {
		return fmt.Errorf("fill the disk: %s", out)
	}
	return nil
}

func freeDisk(ctx context.Context, e *Env) error {
	_, err := e.Exec(ctx, serviceDisk, "rm", "-f", "/data/chaos-filler")
	return err
}

// seeder brings the orders in Postgres up to n, in chunks.
func seeder(n int64) func(context.Context, *Env) error {
	return func(ctx context.Context, e *Env) error { return seed(ctx, e, n) }
}

func seed(ctx context.Context, e *Env, n int64) error {
	out, err := e.SQL(ctx, `SELECT count(*) FROM orders`)
	if err != nil {
		return err
	}
	var have int64
	fmt.Sscan(out, &have)
	for have < n {
		k := min(seedChunk, n-have)
		if _, err := e.SQL(ctx, fmt.Sprintf(`INSERT INTO orders (product_id, count)
			SELECT p.id, 1 + g %% 5 FROM generate_series(1, %d) g
			JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS rn, count(*) OVER () AS n FROM products) p ON p.rn = g %% p.n`, k)); err != nil {
			return fmt.Errorf("seed orders: %w", err)
		}
		have += k
	}
	return nil
}

// killDuringSnapshot restarts the runtime (in file mode without its DuckDB
// file) so that it takes an initial snapshot, and SIGKILLs it once its HTTP API
// answers but it is not ready yet.
func killDuringSnapshot(file bool) func(context.Context, *Env) error {
	return func(ctx context.Context, e *Env) error {
		if err := killService(ServiceAccelerated)(ctx, e); err != nil {
			return err
		}
		if file {
			if _, err := e.Exec(ctx, serviceDisk, "rm", "-rf", "/data/spice"); err != nil {
				return err
			}
		}
		if err := e.Start(ctx, ServiceAccelerated); err != nil {
			return err
		}
		snapshotting := false
		err := poll(ctx, snapshotKillLimit, "the snapshot to start", func() bool {
			code := readyStatus(ctx, e.Client.HTTP, e.Client.AcceleratedURL, e.Client.AcceleratedKey)
			snapshotting = code != 0 && code != http.StatusOK
			return code != 0
		})
		if err != nil {
			return err
		}
		if !snapshotting {
			return fmt.Errorf("the runtime was ready before it could be killed during its snapshot: seed more orders")
		}
		return killService(ServiceAccelerated)(ctx, e)
	}
}

func readyStatus(ctx context.Context, c *http.Client, base, key string) int {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/ready", nil)
	setKey(req, key)
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
