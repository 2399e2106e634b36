package postgres_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		code string
		kind error
		want []string // substrings of the advice; nil means no advice
	}{
		{"28P01", postgres.ErrAuth, []string{"password", `user "app"`, "pg_pass", "POSTGRES_PASSWORD", "first initialised"}},
		{"28000", postgres.ErrAuth, []string{`user "app"`, "pg_user", "pg_hba.conf"}},
		{"3D000", postgres.ErrNoDatabase, []string{`database "shop" does not exist`, "pg_db"}},
		{"42P01", postgres.ErrNoTable, []string{"table public.orders does not exist", "from:"}},
		{"3F000", postgres.ErrNoTable, []string{"schema of table public.orders"}},
		{"42501", postgres.ErrPermission, []string{`user "app"`, "GRANT SELECT ON public.orders"}},
		{"42703", nil, []string{"column", "select list"}},
		{"42601", nil, []string{"WHERE clause"}},
		{"25006", nil, []string{"read-only"}},
		{"53300", postgres.ErrUnreachable, []string{"connection_pool_size", "max_connections"}},
		{"57014", nil, []string{"cancelled"}},
		{"57P03", postgres.ErrUnreachable, []string{"starting up"}},
		{"08006", postgres.ErrUnreachable, []string{"connection"}},
		{"22012", nil, nil},
		{"", nil, nil},
	} {
		kind, advice := postgres.Explain(tc.code, "app", "shop", "public.orders")
		if kind != tc.kind {
			t.Errorf("%s: kind=%v, want %v", tc.code, kind, tc.kind)
		}
		if tc.want == nil && advice != "" {
			t.Errorf("%s: advice=%q, want none", tc.code, advice)
		}
		for _, w := range tc.want {
			if !strings.Contains(advice, w) {
				t.Errorf("%s: advice=%q, want it to mention %q", tc.code, advice, w)
			}
		}
	}
}

// TestConnectionErrors checks each way of pointing at the wrong place fails with a
// message that names it. Open never fails for these: the runtime starts anyway.
func TestConnectionErrors(t *testing.T) {
	dsn := newDatabase(t)
	mustExec(t, dsn, `CREATE TABLE orders (id int4)`)
	dbName := mustParseDSN(t, dsn).Database
	role := dbName + "_reader"
	mustExec(t, dsn, `CREATE ROLE `+role+` LOGIN PASSWORD 'right'`, `GRANT SELECT ON orders TO `+role)
	t.Cleanup(func() { mustExec(t, dsn, `DROP OWNED BY `+role, `DROP ROLE `+role) })

	override := func(kv ...string) map[string]string {
		p := dsnParams(dsn)
		for i := 0; i < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		params map[string]string
		table  string
		kind   error
		want   []string
	}{
		{"no such role", override("pg_user", "nobody_here", "pg_pass", "x"), "orders",
			postgres.ErrAuth, []string{`"nobody_here"`, "pg_user"}},
		{"missing database", override("pg_db", "no_such_db"), "orders",
			postgres.ErrNoDatabase, []string{`database "no_such_db" does not exist`, "pg_db"}},
		{"missing table", nil, "public.no_such_table",
			postgres.ErrNoTable, []string{"table public.no_such_table does not exist", `database "` + dbName + `"`}},
		{"missing schema", nil, "nowhere.orders",
			postgres.ErrNoTable, []string{"nowhere.orders"}},
		{"unreachable host", override("pg_host", "127.0.0.1", "pg_port", "1"), "orders",
			postgres.ErrUnreachable, []string{"127.0.0.1:1", "pg_host and pg_port"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := tc.params
			if params == nil {
				params = dsnParams(dsn)
			}
			src := mustSource(t, params, tc.table)
			_, err := scan(context.Background(), src, engine.ScanRequest{})
			assertError(t, err, tc.kind, tc.want)
		})
	}

	t.Run("bad password", func(t *testing.T) {
		right := mustSource(t, override("pg_user", role, "pg_pass", "right"), "orders")
		mustScan(t, right, engine.ScanRequest{})
		wrong := mustSource(t, override("pg_user", role, "pg_pass", "wrong"), "orders")
		err := wrong.Ping(context.Background())
		if err == nil {
			t.Skip("the server trusts every connection, so it cannot reject a password")
		}
		assertError(t, err, postgres.ErrAuth, []string{"rejected the password", `"` + role + `"`, "pg_pass"})
		_, err = scan(context.Background(), wrong, engine.ScanRequest{})
		assertError(t, err, postgres.ErrAuth, []string{"rejected the password"})
	})

	t.Run("ping", func(t *testing.T) {
		src := mustSource(t, dsnParams(dsn), "orders")
		if err := src.Ping(context.Background()); err != nil {
			t.Fatalf("Ping: %v", err)
		}
		down := mustSource(t, override("pg_host", "127.0.0.1", "pg_port", "1"), "orders")
		assertError(t, down.Ping(context.Background()), postgres.ErrUnreachable, []string{"127.0.0.1:1"})
	})
}

// TestPostgresDown checks a Source opens while Postgres is down, fails clearly
// meanwhile, and works once Postgres is back, without being reopened.
func TestPostgresDown(t *testing.T) {
	ctx := context.Background()
	dsn := newDatabase(t)
	pg := pg.Get(t)
	mustExec(t, dsn, `CREATE TABLE orders (id int4)`, `INSERT INTO orders VALUES (1)`)
	if err := pg.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	up := false
	t.Cleanup(func() { // before the database is dropped
		if !up {
			if err := pg.Start(ctx); err != nil {
				t.Error(err)
			}
		}
	})

	src := mustSource(t, dsnParams(dsn), "orders")
	addr := net.JoinHostPort(pg.Host, strconv.Itoa(pg.Port))
	_, err := scan(ctx, src, engine.ScanRequest{})
	assertError(t, err, postgres.ErrUnreachable, []string{addr, "pg_host and pg_port"})
	assertError(t, src.Ping(ctx), postgres.ErrUnreachable, []string{addr})

	if err := pg.Start(ctx); err != nil {
		t.Fatal(err)
	}
	up = true
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := scan(ctx, src, engine.ScanRequest{})
		if err == nil {
			if got, want := len(got.rows), 1; got != want {
				t.Fatalf("rows=%d, want %d", got, want)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Scan after Postgres came back: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestNotOpen(t *testing.T) {
	src := postgres.NewSource(mustConfig(t, map[string]string{"pg_host": "h", "pg_db": "d", "pg_user": "u"}), "orders")
	err := src.Scan(context.Background(), engine.ScanRequest{}, func(engine.Snapshot) error { return nil })
	if !errors.Is(err, postgres.ErrNotOpen) {
		t.Fatalf("Scan before Open: err=%v, want ErrNotOpen", err)
	}
	src.Close()
	src.Close()

	bad := postgres.NewSource(mustConfig(t, map[string]string{"pg_host": "h", "pg_db": "d", "pg_user": "u"}), "a.b.c")
	if err := bad.Open(context.Background()); err == nil || !strings.Contains(err.Error(), `"a.b.c"`) {
		t.Fatalf("Open with a bad table name: err=%v, want one naming it", err)
	}
}

func assertError(t *testing.T, err, kind error, want []string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("err=%v, want %v", err, kind)
	}
	var pe *postgres.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err=%v (%T), want a *postgres.Error", err, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("err=%q, want it to mention %q", err, w)
		}
	}
}

func mustParseDSN(tb testing.TB, dsn string) *pgconn.Config {
	tb.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	return &cfg.Config
}
