//go:build duckdb_arrow

package cdc_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres/cdc"
)

// TestDropInactive: of the slots of a spicepod's replicas, the one a process
// streams from stays, the idle one goes with its publication, and a slot of
// another name stays.
func TestDropInactive(t *testing.T) {
	dsn := pg.NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prefix := cdc.Name("stale", "", "") + "_"
	live, gone, other := prefix+"live", prefix+"gone", "someone_elses"
	for _, s := range []string{live, gone, other} {
		mustExec(t, dsn,
			"SELECT pg_create_logical_replication_slot('"+s+"', 'pgoutput')",
			"CREATE PUBLICATION "+s+" FOR ALL TABLES")
	}
	lone := prefix + "lone" // a publication whose slot a clean shutdown dropped
	mustExec(t, dsn, "CREATE PUBLICATION "+lone+" FOR ALL TABLES")

	// A replica streaming from live.
	cc, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cc.RuntimeParams["replication"] = "database"
	repl, err := pgconn.ConnectConfig(ctx, cc)
	if err != nil {
		t.Fatal(err)
	}
	defer repl.Close(context.Background())
	if err := pglogrepl.StartReplication(ctx, repl, live, 0, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names '" + live + "'"},
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, live+" to be active", func() bool {
		return slices.Equal(pgRows(t, dsn, "SELECT active::text FROM pg_replication_slots WHERE slot_name = '"+live+"'"), []string{"true"})
	})

	cfg, err := postgres.ParseParams(map[string]string{postgres.ParamConnectionString: dsn})
	if err != nil {
		t.Fatal(err)
	}
	dropped, err := cdc.DropInactive(ctx, cfg, prefix, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := dropped, []string{gone, lone}; !slices.Equal(got, want) {
		t.Fatalf("dropped=%v, want %v", got, want)
	}
	if got, want := pgRows(t, dsn, "SELECT slot_name FROM pg_replication_slots WHERE database = current_database() ORDER BY 1"),
		[]string{other, live}; !slices.Equal(got, want) {
		t.Fatalf("slots left=%v, want %v", got, want)
	}
	if got, want := pgRows(t, dsn, "SELECT pubname FROM pg_publication ORDER BY 1"),
		[]string{other, live}; !slices.Equal(got, want) {
		t.Fatalf("publications left=%v, want %v", got, want)
	}
	if _, err := cdc.DropInactive(ctx, cfg, "", time.Millisecond); err == nil {
		t.Fatal("an empty prefix was accepted")
	}
	repl.Close(context.Background())
	mustExec(t, dsn, "SELECT pg_drop_replication_slot('"+other+"')")
	waitFor(t, live+" to be released", func() bool {
		return slices.Equal(pgRows(t, dsn, "SELECT active::text FROM pg_replication_slots WHERE slot_name = '"+live+"'"), []string{"false"})
	})
	mustExec(t, dsn, "SELECT pg_drop_replication_slot('"+live+"')")
}
