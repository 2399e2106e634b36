package chaos

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// Names of the faults Catalog knows.
const (
	FaultKillAccelerated          = "kill-accelerated"
	FaultKillMaterialized         = "kill-materialized"
	FaultRestartPostgres          = "restart-postgres"
	FaultKillPostgres             = "kill-postgres"
	FaultKillAPI                  = "kill-api"
	FaultDropSlot                 = "drop-slot"
	FaultPartitionAccelerated     = "partition-accelerated"
	FaultPartitionMaterial        = "partition-materialized"
	FaultSlowLink                 = "slow-link"
	FaultLoadKillAccelerated      = "load-kill-accelerated"
	FaultLoadKillMaterialized     = "load-kill-materialized"
	FaultOverload                 = "overload"
	FaultOverloadKillAccelerated  = "overload-kill-accelerated"
	FaultOverloadKillMaterialized = "overload-kill-materialized"
	FaultKillAcceleratedFile      = "kill-accelerated-file"
	FaultSlotInvalidatedFile      = "slot-invalidated-file"
	FaultDiskFullFile             = "disk-full-file"
	FaultKillSnapshotFile         = "kill-snapshot-file"
	FaultKillSnapshotMemory       = "kill-snapshot-memory"
)

// Modes of the stack a fault needs: the accelerated runtime's acceleration
// mode, or the read-side hops through the chaos tool's proxies.
const (
	ModeMemory = ""
	ModeFile   = "file"
	ModeSlow   = "slow"
)

// Defaults of the catalog's settings.
const (
	DefaultPartition = 30 * time.Second
	// DefaultSeed is enough orders that the initial snapshot takes seconds.
	DefaultSeed = 1_000_000
	// DefaultLoadRate is the load rounds' write rate; pass 80% of the whole
	// chain's sustained rate that the write benchmark finds with --load-rate.
	DefaultLoadRate = 170
	// OverloadFactor is how many times the load rate the overload rounds write.
	OverloadFactor = 2
)

// Settings of the faults, fixed by the chaos tool.
const (
	stopLimit         = 60 * time.Second // wait for a signalled container to stop
	overloadHold      = 60 * time.Second
	behindWait        = 30 * time.Second // wait for a runtime to fall behindBytes behind
	behindBytes       = 64 << 10
	slowLatency       = 200 * time.Millisecond
	slowBandwidth     = 64 << 10 // bytes per second
	slowLinkHold      = 20 * time.Second
	diskFullHold      = 15 * time.Second
	snapshotKillLimit = 2 * time.Minute
	serviceDisk       = "accelerated-disk"
)

// Fault is one thing that goes wrong, injected into the real stack.
type Fault struct {
	Name        string
	Description string
	// Allowed are the endpoints that depend on the failed part: non-2xx
	// answers elsewhere are reported as unexpected.
	Allowed []string
	// Mode is the mode of the stack the fault needs (ModeMemory, the
	// default, ModeFile or ModeSlow).
	Mode string
	// Prepare, when set, runs before the round's workload starts (seeding).
	// Inject breaks something; Hold passes; Heal repairs it (nil: nothing to
	// repair, the stack heals itself).
	Prepare, Inject func(ctx context.Context, e *Env) error
	Hold            time.Duration
	Heal            func(ctx context.Context, e *Env) error
	// Restarts is the service Heal starts again, for process faults: the fault
	// ends when that service is ready, not when it was started.
	Restarts string
	// Load, when set, runs the round's writes at another rate than the run's;
	// its round is also listed in the load table.
	Load *Load
}

// Load is a round's write rates.
type Load struct {
	Rate     float64 // orders per second outside the overload (the round's base rate)
	Overload float64 // orders per second between Inject and Heal; zero for none
}

// Env is what a fault acts on: the stack's containers and its endpoints.
type Env struct {
	*Stack
	Client   *Client
	Links    []*Proxy  // the slow-link proxies, when the stack uses them
	Workload *Workload // the round's workload (its write rate can be changed)
	notes    []string
}

// Note records something the fault saw, for the round's details.
func (e *Env) Note(s string) { e.notes = append(e.notes, s) }

// Settings tune the catalog's faults.
type Settings struct {
	Partition time.Duration // how long a partition lasts (DefaultPartition)
	Seed      int64         // orders in Postgres before a kill during the snapshot (DefaultSeed)
	WriteRate float64       // the run's write rate, to which an overload returns (DefaultWriteRate)
	LoadRate  float64       // the load rounds' write rate (DefaultLoadRate)
}

// Catalog returns every fault, in the order a full run takes them: those in
// mode: memory (the load and overload rounds last), then those in mode:
// file, then the snapshot kills, which seed Settings.Seed orders first.
func Catalog(set Settings) []Fault {
	set.Partition = cmpOr(set.Partition, DefaultPartition)
	set.Seed, set.WriteRate, set.LoadRate = cmpOr(set.Seed, DefaultSeed), cmpOr(set.WriteRate, DefaultWriteRate), cmpOr(set.LoadRate, DefaultLoadRate)
	readSide, mat := []string{EndpointAccelerated, EndpointMaterialized}, []string{EndpointMaterialized}
	load, over, normal := set.LoadRate, OverloadFactor*set.LoadRate, set.WriteRate
	// A reader with a token may wait out a lagging runtime (504): an
	// overload is allowed on the read side.
	overload := Fault{Name: FaultOverload, Allowed: readSide, Load: &Load{Rate: normal, Overload: over}, Hold: overloadHold,
		Description: fmt.Sprintf("write %.0f orders/s (%dx the load rate) for %s, then %.0f/s: Recover is the catch-up", over, OverloadFactor, overloadHold, normal),
		Inject:      setRate(over), Heal: setRate(normal)}
	return []Fault{
		restart(FaultKillAccelerated, "SIGKILL the accelerated runtime while changes stream, start it again", ServiceAccelerated, "KILL", readSide),
		restart(FaultKillMaterialized, "SIGKILL the materialized runtime while changes flow, start it again", ServiceMaterialized, "KILL", mat),
		restart(FaultRestartPostgres, "restart Postgres with a fast shutdown (SIGINT)", ServicePostgres, "INT", Endpoints),
		restart(FaultKillPostgres, "SIGKILL Postgres (crash recovery on start)", ServicePostgres, "KILL", Endpoints),
		restart(FaultKillAPI, "SIGKILL the api under load, start it again", ServiceAPI, "KILL", Endpoints),
		{Name: FaultDropSlot, Description: "drop the accelerated runtime's replication slot under it", Allowed: readSide, Inject: dropSlot},
		partition(FaultPartitionAccelerated, ServiceAccelerated, "Postgres, the api and materialized", set.Partition, readSide),
		partition(FaultPartitionMaterial, ServiceMaterialized, "accelerated and the api", set.Partition, mat),
		{Name: FaultSlowLink, Mode: ModeSlow, Allowed: readSide, Hold: slowLinkHold, Inject: setLinks(slowLatency, slowBandwidth), Heal: healLinks,
			Description: fmt.Sprintf("add %s per chunk and a %d KiB/s cap to both read-side hops (accelerated -> Postgres, materialized -> accelerated) for %s",
				slowLatency, slowBandwidth>>10, slowLinkHold)},
		restart(FaultLoadKillAccelerated, fmt.Sprintf("SIGKILL the accelerated runtime with %.0f orders/s written, start it again", load),
			ServiceAccelerated, "KILL", readSide).under(Load{Rate: load}),
		restart(FaultLoadKillMaterialized, fmt.Sprintf("SIGKILL the materialized runtime with %.0f orders/s written, start it again", load),
			ServiceMaterialized, "KILL", mat).under(Load{Rate: load}),
		overload,
		killBehind(overload, FaultOverloadKillAccelerated, ServiceAccelerated, readSide),
		killBehind(overload, FaultOverloadKillMaterialized, ServiceMaterialized, mat),
		restart(FaultKillAcceleratedFile, "SIGKILL the accelerated runtime in mode: file while changes stream; it resumes from its stored position",
			ServiceAccelerated, "KILL", readSide).in(ModeFile),
		{Name: FaultSlotInvalidatedFile, Mode: ModeFile, Allowed: readSide, Inject: invalidateSlot, Heal: start(ServiceAccelerated), Restarts: ServiceAccelerated,
			Description: "SIGKILL the accelerated runtime in mode: file, let Postgres invalidate its slot (max_slot_wal_keep_size 1MB, WAL written, checkpoint), start it: it must take a new snapshot"},
		{Name: FaultDiskFullFile, Mode: ModeFile, Allowed: readSide, Inject: fillDisk, Hold: diskFullHold, Heal: freeDisk,
			Description: fmt.Sprintf("fill the tmpfs volume of the accelerated runtime in mode: file for %s while orders flow, then free it", diskFullHold)},
		{Name: FaultKillSnapshotFile, Mode: ModeFile, Allowed: readSide, Prepare: seed(set.Seed), Inject: killDuringSnapshot(true),
			Heal: start(ServiceAccelerated), Restarts: ServiceAccelerated, Description: fmt.Sprintf("with %d orders seeded, stop the accelerated runtime in mode: file, "+
				"delete its DuckDB file, start it and SIGKILL it during its initial snapshot (the file half written)", set.Seed)},
		{Name: FaultKillSnapshotMemory, Allowed: readSide, Prepare: seed(set.Seed), Inject: killDuringSnapshot(false), Heal: start(ServiceAccelerated),
			Restarts: ServiceAccelerated, Description: fmt.Sprintf("with %d orders seeded, SIGKILL the accelerated runtime in mode: memory during its initial snapshot", set.Seed)},
	}
}

func cmpOr[T int | int64 | float64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func (f Fault) in(mode string) Fault { f.Mode = mode; return f }
func (f Fault) under(l Load) Fault   { f.Load = &l; return f }

// Select picks faults by name from the catalog, in the order of names.
func Select(catalog []Fault, names []string) ([]Fault, error) {
	var out []Fault
	for _, n := range names {
		i := indexOf(catalog, n)
		if i < 0 {
			var known []string
			for _, f := range catalog {
				known = append(known, f.Name)
			}
			return nil, fmt.Errorf("unknown fault %q: choose from %v", n, known)
		}
		out = append(out, catalog[i])
	}
	return out, nil
}

func indexOf(faults []Fault, name string) int {
	for i, f := range faults {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// restart is a process fault: service's main process signalled with sig,
// then started again.
func restart(name, description, service, sig string, allowed []string) Fault {
	return Fault{Name: name, Description: description, Allowed: allowed, Inject: stop(service, sig), Heal: start(service), Restarts: service}
}

// partition disconnects service from the network for d.
func partition(name, service, cutFrom string, d time.Duration, allowed []string) Fault {
	return Fault{Name: name, Allowed: allowed, Hold: d,
		Description: fmt.Sprintf("disconnect the %s runtime from the network for %s (cut from %s)", service, d, cutFrom),
		Inject:      func(ctx context.Context, e *Env) error { return e.Disconnect(ctx, service) },
		Heal:        func(ctx context.Context, e *Env) error { return e.Connect(ctx, service) }}
}

// stop signals the service's main process and waits for it to stop.
func stop(service, sig string) func(context.Context, *Env) error {
	return func(ctx context.Context, e *Env) error {
		if err := e.Signal(ctx, service, sig); err != nil {
			return err
		}
		return e.WaitStopped(ctx, service, stopLimit)
	}
}

func start(service string) func(context.Context, *Env) error {
	return func(ctx context.Context, e *Env) error { return e.Start(ctx, service) }
}

func setRate(rate float64) func(context.Context, *Env) error {
	return func(_ context.Context, e *Env) error { e.Workload.SetRate(rate); return nil }
}

// killBehind is the overload with a kill: once service is behindBytes of WAL
// behind (at most behindWait), it is SIGKILLed and started again; the
// overload goes on for half of overloadHold more.
func killBehind(overload Fault, name, service string, allowed []string) Fault {
	f := overload
	f.Name, f.Allowed, f.Hold = name, allowed, overloadHold/2
	f.Description = fmt.Sprintf("write %.0f orders/s; once the %s runtime is %d KiB of WAL behind (at most %s), SIGKILL it and start it again; %.0f/s again %s later",
		f.Load.Overload, service, behindBytes>>10, behindWait, f.Load.Rate, overloadHold/2)
	f.Inject = func(ctx context.Context, e *Env) error {
		e.Workload.SetRate(f.Load.Overload)
		if bench.Poll(ctx, behindWait, 200*time.Millisecond, service+" to fall behind", func() bool {
			s, _, ok := e.Client.Sample(ctx, service, e.Workload.Token())
			return ok && s.Behind >= behindBytes
		}) != nil {
			e.Note(fmt.Sprintf("%s was not %d KiB behind within %s: killed anyway", service, behindBytes>>10, behindWait))
		}
		if err := stop(service, "KILL")(ctx, e); err != nil {
			return err
		}
		return e.Start(ctx, service)
	}
	return f
}

// dropSlot terminates the walsender of the accelerated runtime's slot and
// drops the slot before the runtime can reconnect.
func dropSlot(ctx context.Context, e *Env) error {
	_, err := e.Client.Postgres(ctx, `DO $$
DECLARE slot text;
BEGIN
  SELECT slot_name INTO slot FROM pg_replication_slots WHERE slot_name LIKE '%accelerated%' LIMIT 1;
  IF slot IS NULL THEN RAISE EXCEPTION 'no replication slot of accelerated'; END IF;
  FOR i IN 1..200 LOOP
    BEGIN
      PERFORM pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = slot AND active_pid IS NOT NULL;
      PERFORM pg_sleep(0.01);
      PERFORM pg_drop_replication_slot(slot);
      RETURN;
    EXCEPTION WHEN object_in_use THEN NULL;
    END;
  END LOOP;
  RAISE EXCEPTION 'slot % stayed in use', slot;
END $$`)
	return err
}

// invalidateSlot stops the runtime, then makes Postgres invalidate its slot.
func invalidateSlot(ctx context.Context, e *Env) error {
	if err := stop(ServiceAccelerated, "KILL")(ctx, e); err != nil {
		return err
	}
	defer func() {
		for _, sql := range []string{`ALTER SYSTEM RESET max_slot_wal_keep_size`, `SELECT pg_reload_conf()`, `DROP TABLE IF EXISTS chaos_filler`} {
			_, _ = e.Client.Postgres(context.WithoutCancel(ctx), sql)
		}
	}()
	steps := []string{`ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'`, `SELECT pg_reload_conf()`, `CREATE TABLE IF NOT EXISTS chaos_filler (x int)`}
	for range 20 {
		steps = append(steps, `INSERT INTO chaos_filler SELECT generate_series(1, 100000)`, `SELECT pg_switch_wal()`, `CHECKPOINT`,
			`SELECT string_agg(slot_name || '=' || coalesce(wal_status, ''), ',') FROM pg_replication_slots WHERE slot_name LIKE '%accelerated%'`)
	}
	for _, sql := range steps {
		out, err := e.Client.Postgres(ctx, sql)
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
	if out, _ := e.Exec(ctx, serviceDisk, "dd", "if=/dev/zero", "of=/data/chaos-filler", "bs=1M"); !strings.Contains(out, "No space left") {
		return fmt.Errorf("fill the disk: %s", out)
	}
	return nil
}

func freeDisk(ctx context.Context, e *Env) error {
	_, err := e.Exec(ctx, serviceDisk, "rm", "-f", "/data/chaos-filler")
	return err
}

// seed brings the orders in Postgres up to n.
func seed(n int64) func(context.Context, *Env) error {
	return func(ctx context.Context, e *Env) error {
		pg, err := bench.OpenPostgres(ctx, e.Client.PostgresURL)
		if err != nil {
			return err
		}
		defer pg.Close(context.WithoutCancel(ctx))
		pg.SeedChunk = 200_000
		_, err = pg.SeedTo(ctx, n)
		return err
	}
}

// killDuringSnapshot restarts the runtime (in file mode without its DuckDB
// file) so that it takes an initial snapshot, and SIGKILLs it once its HTTP API
// answers but it is not ready yet.
func killDuringSnapshot(file bool) func(context.Context, *Env) error {
	return func(ctx context.Context, e *Env) error {
		if err := stop(ServiceAccelerated, "KILL")(ctx, e); err != nil {
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
		code := 0
		if err := bench.Poll(ctx, snapshotKillLimit, 250*time.Millisecond, "the snapshot to start", func() bool {
			code = e.Client.Status(ctx, ServiceAccelerated)
			return code != 0
		}); err != nil {
			return err
		}
		if code == http.StatusOK {
			return fmt.Errorf("the runtime was ready before it could be killed during its snapshot: seed more orders")
		}
		return stop(ServiceAccelerated, "KILL")(ctx, e)
	}
}

// setLinks sets every slow-link proxy's latency and bandwidth.
func setLinks(latency time.Duration, rate int64) func(context.Context, *Env) error {
	return func(_ context.Context, e *Env) error {
		if len(e.Links) == 0 {
			return fmt.Errorf("no proxies between the hops: the stack was not started with %v", SlowLinkFiles)
		}
		for _, p := range e.Links {
			if err := p.SetLink(latency, rate); err != nil {
				return err
			}
		}
		return nil
	}
}

// healLinks restores plain links and checks that the stack used them: a
// slow link nobody crossed proves nothing.
func healLinks(ctx context.Context, e *Env) error {
	if err := setLinks(0, 0)(ctx, e); err != nil {
		return err
	}
	for i, p := range e.Links {
		if p.Accepted() == 0 {
			return fmt.Errorf("no connection crossed proxy %d to %s: the hops do not go through it", i, p.Target)
		}
	}
	return nil
}
