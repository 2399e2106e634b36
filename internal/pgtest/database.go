package pgtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// maxIdentifier is Postgres's limit on identifier length (NAMEDATALEN-1).
const maxIdentifier = 63

// NewDatabase creates an empty database in the server and returns its DSN, for
// isolation between tests that share one container. The database is dropped when
// tb's test ends, with its connections and replication slots; a failure to drop is
// only logged, as the container goes away anyway.
func (p *Postgres) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := p.databaseName(tb.Name())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.admin(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		tb.Fatalf("pgtest: create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := p.dropDatabase(ctx, name); err != nil {
			tb.Logf("pgtest: drop database %s: %v", name, err)
		}
	})
	return p.DSNFor(name)
}

// databaseName derives a unique, valid database name from a test name.
func (p *Postgres) databaseName(testName string) string {
	suffix := fmt.Sprintf("_%d", p.seq.Add(1))
	var b strings.Builder
	b.WriteString("t_")
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > maxIdentifier-len(suffix) {
		name = name[:maxIdentifier-len(suffix)]
	}
	return name + suffix
}

// dropDatabase drops name after ending its sessions and dropping its replication
// slots, which would otherwise keep it alive. A walsender may need a moment to
// release its slot after its backend is terminated: retry for a few seconds.
func (p *Postgres) dropDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, p.DSN)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for {
		_, err = conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = $1 AND pid <> pg_backend_pid()`, name)
		if err == nil {
			_, err = conn.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots
				WHERE database = $1 AND NOT active`, name)
		}
		if err == nil {
			_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// admin runs one statement as the superuser in the default database.
func (p *Postgres) admin(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, p.DSN)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}
