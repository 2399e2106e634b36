package pgtest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqrs-spice/cqrs/internal/pgtest"
)

// shared is the package's Postgres, started by the first test that needs it.
var shared pgtest.Shared

func TestMain(m *testing.M) { shared.Main(m) }

func MustConnect(tb testing.TB, dsn string) *pgx.Conn {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("connect %s: %v", dsn, err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestShared(t *testing.T) {
	ctx := t.Context()
	pg := shared.Get(t)
	conn := MustConnect(t, pg.DSN)

	var n int
	if err := conn.QueryRow(ctx, "SELECT 41 + 1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if got, want := n, 42; got != want {
		t.Fatalf("select=%d, want %d", got, want)
	}
	for setting, want := range map[string]string{
		"wal_level":             "logical",
		"max_replication_slots": "20",
		"max_wal_senders":       "20",
		"fsync":                 "off",
	} {
		var got string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s=%q, want %q", setting, got, want)
		}
	}
	if pg.Host == "" || pg.Port == 0 || pg.User == "" || pg.Password == "" || pg.Database == "" {
		t.Errorf("incomplete Postgres: %+v", pg)
	}
}

// TestReplication opens a logical replication connection, as the runtime's
// Postgres connector does, and creates a pgoutput slot.
func TestReplication(t *testing.T) {
	ctx := t.Context()
	dsn := shared.NewDatabase(t)
	conn, err := pgconn.Connect(ctx, dsn+"&replication=database")
	if err != nil {
		t.Fatalf("replication connection: %v", err)
	}
	defer conn.Close(context.Background())

	sys, err := pglogrepl.IdentifySystem(ctx, conn)
	if err != nil {
		t.Fatalf("IDENTIFY_SYSTEM: %v", err)
	}
	if sys.SystemID == "" || sys.XLogPos == 0 {
		t.Fatalf("IDENTIFY_SYSTEM=%+v, want a system id and a WAL position", sys)
	}
	slot, err := pglogrepl.CreateReplicationSlot(ctx, conn, "pgtest_slot", "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Temporary: true, Mode: pglogrepl.LogicalReplication})
	if err != nil {
		t.Fatalf("create logical slot: %v", err)
	}
	if slot.ConsistentPoint == "" {
		t.Fatalf("slot=%+v, want a consistent point", slot)
	}
}

func TestNewDatabase(t *testing.T) {
	ctx := t.Context()
	a, b := shared.NewDatabase(t), shared.NewDatabase(t)
	if a == b {
		t.Fatalf("NewDatabase returned %s twice", a)
	}
	connA, connB := MustConnect(t, a), MustConnect(t, b)
	if _, err := connA.Exec(ctx, "CREATE TABLE t (x int)"); err != nil {
		t.Fatal(err)
	}
	var exists bool
	if err := connB.QueryRow(ctx, "SELECT to_regclass('t') IS NOT NULL").Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Fatal("table created in one database is visible in the other")
	}
}

// TestNewDatabase_Dropped checks that a database, with an open connection and a
// replication slot, is gone after its test.
func TestNewDatabase_Dropped(t *testing.T) {
	var name string
	t.Run("use", func(t *testing.T) {
		dsn := shared.NewDatabase(t)
		conn := MustConnect(t, dsn)
		if err := conn.QueryRow(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(t.Context(),
			"SELECT pg_create_logical_replication_slot('pgtest_dropped', 'pgoutput')"); err != nil {
			t.Fatal(err)
		}
	})
	var n int
	err := MustConnect(t, shared.Get(t).DSN).QueryRow(t.Context(),
		"SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n, 0; got != want {
		t.Fatalf("databases named %s=%d after the test, want %d", name, got, want)
	}
}

// TestStopStart takes Postgres away and brings it back at the same address, with
// its data.
func TestStopStart(t *testing.T) {
	own := pgtest.Start(t)
	ctx := t.Context()
	conn := MustConnect(t, own.DSN)
	if _, err := conn.Exec(ctx, "CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	dsn, port := own.DSN, own.Port

	if err := own.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if c, err := pgx.Connect(short, dsn); err == nil {
		c.Close(ctx)
		t.Fatal("connected to a stopped Postgres")
	}

	if err := own.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if own.DSN != dsn || own.Port != port {
		t.Fatalf("after restart DSN=%s port=%d, want %s %d", own.DSN, own.Port, dsn, port)
	}
	var x int
	if err := MustConnect(t, dsn).QueryRow(ctx, "SELECT x FROM kept").Scan(&x); err != nil {
		t.Fatal(err)
	}
	if got, want := x, 7; got != want {
		t.Fatalf("x=%d, want %d", got, want)
	}
}

func TestImageNotFound(t *testing.T) {
	if testing.Short() {
		t.Skip("asks Docker: skipped under -short")
	}
	t.Setenv("POSTGRES_IMAGE", "cqrs-postgres:no-such-tag")
	_, _, err := pgtest.StartMain()
	var notFound *pgtest.ImageNotFoundError
	if !errors.As(err, &notFound) {
		t.Fatalf("err=%v, want an ImageNotFoundError", err)
	}
	if got, want := notFound.Image, "cqrs-postgres:no-such-tag"; got != want {
		t.Fatalf("image=%q, want %q", got, want)
	}

	msg := (&pgtest.ImageNotFoundError{Image: pgtest.DefaultImage}).Error()
	if got, want := msg, "image cqrs-postgres:15 not found: run `make postgres-image`"; got != want {
		t.Fatalf("message=%q, want %q", got, want)
	}
}

// TestLibpqEnvCleared runs this test binary again with libpq's variables set,
// as a psql user's shell has them: Main clears them before any test runs.
func TestLibpqEnvCleared(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		for _, name := range []string{"PGPASSWORD", "PGHOST", "PGUSER", "PGSSLMODE"} {
			if v, ok := os.LookupEnv(name); ok {
				t.Fatalf("%s=%q in the test process, want it cleared", name, v)
			}
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLibpqEnvCleared$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"=1",
		"PGPASSWORD=wrong", "PGHOST=nowhere.invalid", "PGUSER=nobody", "PGSSLMODE=verify-full")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("test binary with PG* set: %v\n%s", err, out)
	}
}

// helperEnv makes the test binary check its own environment (TestLibpqEnvCleared).
const helperEnv = "CQRS_PGTEST_HELPER"
