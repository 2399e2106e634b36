package chaos

import (
	"context"
	"fmt"
	"time"
)

// DefaultPartition is how long a partition lasts.
const DefaultPartition = 30 * time.Second

// stopLimit bounds the wait for a signalled container to stop.
const stopLimit = 60 * time.Second

// Fault is one thing that goes wrong, injected into the real stack.
type Fault struct {
	Name        string
	Description string
	// Allowed are the endpoints that depend on the failed part: non-2xx
	// answers elsewhere are reported as unexpected.
	Allowed []string
	// Inject breaks something; Hold passes; Heal repairs it (nil: nothing to
	// repair, the stack heals itself).
	// Mode is the accelerated runtime's acceleration mode the fault needs:
	// ModeMemory (the default, "") or ModeFile.
	Mode string
	// Prepare, when set, runs before the round's workload starts (seeding).
	Prepare func(ctx context.Context, e *Env) error
	Inject  func(ctx context.Context, e *Env) error
	Hold    time.Duration
	Heal    func(ctx context.Context, e *Env) error
	// Restarts is the service Heal starts again, for process faults: the fault
	// ends when that service is ready (ReadyProbe), not when it was started.
	Restarts string
	// Load, when set, runs the round's writes at another rate than the run's
	// (see Load); its round is also listed in the load table.
	Load *Load
}

// Env is what a fault acts on: the stack's containers and its endpoints.
type Env struct {
	*Stack
	Client *Client
	Links  []*Proxy // the slow-link proxies, when the stack uses them
	// Workload is the round's workload (its write rate can be changed).
	Workload    *Workload
	PostgresURL string
	notes       []string
}

// SQL runs one statement in Postgres and returns its first value as text.
func (e *Env) SQL(ctx context.Context, sql string) (string, error) {
	return postgres(ctx, e.PostgresURL, sql)
}

// Note records something the fault saw, for the round's details.
func (e *Env) Note(s string) { e.notes = append(e.notes, s) }

// Names of the faults Catalog knows.
const (
	FaultKillAccelerated      = "kill-accelerated"
	FaultKillMaterialized     = "kill-materialized"
	FaultRestartPostgres      = "restart-postgres"
	FaultKillPostgres         = "kill-postgres"
	FaultPartitionAccelerated = "partition-accelerated"
	FaultPartitionMaterial    = "partition-materialized"
	FaultKillAPI              = "kill-api"
	FaultDropSlot             = "drop-slot"
)

// Acceleration modes of the accelerated runtime.
const (
	ModeMemory = ""
	ModeFile   = "file"
)

// Settings tune the catalog's faults.
type Settings struct {
	Partition time.Duration // how long a partition lasts (DefaultPartition)
	Seed      int64         // orders in Postgres before a kill during the snapshot (DefaultSeed)
	WriteRate float64       // the run's write rate, to which an overload returns (DefaultWriteRate)
	LoadRate  float64       // the load rounds' write rate (DefaultLoadRate)
}

// DefaultSeed is enough orders that the initial snapshot takes seconds.
const DefaultSeed = 1_000_000

// Catalog returns every fault, in the order a full run takes them: the ones
// in mode: memory (the load and overload rounds last), then those in mode: file, then the snapshot kills, which
// seed Settings.Seed orders first.
func Catalog(set Settings) []Fault {
	if set.Partition <= 0 {
		set.Partition = DefaultPartition
	}
	if set.Seed <= 0 {
		set.Seed = DefaultSeed
	}
	if set.WriteRate <= 0 {
		set.WriteRate = DefaultWriteRate
	}
	if set.LoadRate <= 0 {
		set.LoadRate = DefaultLoadRate
	}
	partition := set.Partition
	readSide := []string{EndpointAccelerated, EndpointMaterialized}
	faults := append(memoryFaults(partition, readSide), slowFaults()...)
	faults = append(faults, loadFaults(set)...)
	return append(faults, fileFaults(set, readSide)...)
}

func memoryFaults(partition time.Duration, readSide []string) []Fault {
	return []Fault{
		{
			Name:        FaultKillAccelerated,
			Description: "SIGKILL the accelerated runtime while changes stream, start it again",
			Allowed:     readSide,
			Inject:      killService(ServiceAccelerated),
			Heal:        startService(ServiceAccelerated),
			Restarts:    ServiceAccelerated,
		},
		{
			Name:        FaultKillMaterialized,
			Description: "SIGKILL the materialized runtime while changes flow, start it again",
			Allowed:     []string{EndpointMaterialized},
			Inject:      killService(ServiceMaterialized),
			Heal:        startService(ServiceMaterialized),
			Restarts:    ServiceMaterialized,
		},
		{
			Name:        FaultRestartPostgres,
			Description: "restart Postgres with a fast shutdown (SIGINT)",
			Allowed:     Endpoints,
			Inject:      stopService(ServicePostgres, "INT"),
			Heal:        startService(ServicePostgres),
			Restarts:    ServicePostgres,
		},
		{
			Name:        FaultKillPostgres,
			Description: "SIGKILL Postgres (crash recovery on start)",
			Allowed:     Endpoints,
			Inject:      killService(ServicePostgres),
			Heal:        startService(ServicePostgres),
			Restarts:    ServicePostgres,
		},
		{
			Name:        FaultKillAPI,
			Description: "SIGKILL the api under load, start it again",
			Allowed:     Endpoints,
			Inject:      killService(ServiceAPI),
			Heal:        startService(ServiceAPI),
			Restarts:    ServiceAPI,
		},
		{
			Name:        FaultDropSlot,
			Description: "drop the accelerated runtime's replication slot under it",
			Allowed:     readSide,
			Inject:      dropSlot(ServiceAccelerated),
		},
		{
			Name: FaultPartitionAccelerated,
			Description: fmt.Sprintf("disconnect the accelerated runtime from the network for %s "+
				"(cut from Postgres, the api and materialized)", partition),
			Allowed: readSide,
			Inject:  func(ctx context.Context, e *Env) error { return e.Disconnect(ctx, ServiceAccelerated) },
			Hold:    partition,
			Heal:    func(ctx context.Context, e *Env) error { return e.Connect(ctx, ServiceAccelerated) },
		},
		{
			Name: FaultPartitionMaterial,
			Description: fmt.Sprintf("disconnect the materialized runtime from the network for %s "+
				"(cut from accelerated and the api)", partition),
			Allowed: []string{EndpointMaterialized},
			Inject:  func(ctx context.Context, e *Env) error { return e.Disconnect(ctx, ServiceMaterialized) },
			Hold:    partition,
			Heal:    func(ctx context.Context, e *Env) error { return e.Connect(ctx, ServiceMaterialized) },
		},
	}
}

// Select picks faults by name from the catalog, in the order of names.
func Select(catalog []Fault, names []string) ([]Fault, error) {
	var out []Fault
	for _, n := range names {
		found := false
		for _, f := range catalog {
			if f.Name == n {
				out, found = append(out, f), true
				break
			}
		}
		if !found {
			var known []string
			for _, f := range catalog {
				known = append(known, f.Name)
			}
			return nil, fmt.Errorf("unknown fault %q: choose from %v", n, known)
		}
	}
	return out, nil
}

func killService(service string) func(context.Context, *Env) error {
	return stopService(service, "KILL")
}

// stopService signals the service's main process and waits for it to stop.
func stopService(service, sig string) func(context.Context, *Env) error {
	return func(ctx context.Context, s *Env) error {
		if err := s.Signal(ctx, service, sig); err != nil {
			return fmt.Errorf("signal %s: %w", service, err)
		}
		return s.WaitStopped(ctx, service, stopLimit)
	}
}

func startService(service string) func(context.Context, *Env) error {
	return func(ctx context.Context, e *Env) error { return e.Start(ctx, service) }
}

// dropSlot terminates the walsender of the instance's slot and drops the slot
// before the runtime can reconnect.
func dropSlot(instance string) func(context.Context, *Env) error {
	return func(ctx context.Context, s *Env) error {
		_, err := s.SQL(ctx, fmt.Sprintf(`DO $$
DECLARE slot text;
BEGIN
  SELECT slot_name INTO slot FROM pg_replication_slots WHERE slot_name LIKE '%%%s%%' LIMIT 1;
  IF slot IS NULL THEN RAISE EXCEPTION 'no replication slot of %s'; END IF;
  FOR i IN 1..200 LOOP
    BEGIN
      PERFORM pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = slot AND active_pid IS NOT NULL;
      PERFORM pg_sleep(0.01);
      PERFORM pg_drop_replication_slot(slot);
      RETURN;
    EXCEPTION WHEN object_in_use THEN NULL;
    END;
  END LOOP;
  RAISE EXCEPTION 'slot %% stayed in use', slot;
END $$`, instance, instance))
		return err
	}
}
