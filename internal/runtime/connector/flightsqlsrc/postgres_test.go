//go:build duckdb_arrow

package flightsqlsrc_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cqrs-spice/cqrs/internal/pgtest"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
)

// TestChainPostgres is the recipe end to end below the api: Postgres, runtime A
// accelerating products and orders with the rankings view, runtime B
// materializing rankings from A. B answers what Postgres answers, before and
// after a new order, with its watermark past the order's commit.
func TestChainPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Postgres container")
	}
	ctx := context.Background()
	pg := pgtest.Start(t)
	initSQL, err := os.ReadFile("../../../../init.sql")
	if err != nil {
		t.Fatal(err)
	}
	pgExec(t, pg.DSN, string(initSQL))

	sources := map[string]engine.Source{}
	for _, table := range []string{"products", "orders"} {
		cfg, err := postgres.ParseParams(map[string]string{postgres.ParamConnectionString: pg.DSN})
		if err != nil {
			t.Fatal(err)
		}
		src := postgres.NewSource(cfg, "public."+table)
		if err := src.Open(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(src.Close)
		sources[table] = src
	}
	a := runtimetest.NewEngine(t, runtimetest.RecipePod, sources, nil)
	runtimetest.WaitReady(t, a)
	srv := runtimetest.StartServer(t, a, nil, nil)
	endpoint := "http://" + srv.Addr()
	b := runtimetest.NewEngine(t, materializedPod(endpoint),
		map[string]engine.Source{"rankings": newSource(t, map[string]string{"flightsql_endpoint": endpoint}, "rankings")}, nil)
	runtimetest.WaitReady(t, b)

	want := pgRankings(t, pg.DSN)
	if got, _ := query(t, b, rankingsQuery); !equal(got, want) {
		t.Fatalf("B=%q, want Postgres's %q", got, want)
	}

	// A new order: A refreshes (as its interval would), B follows through the push.
	pgExec(t, pg.DSN, "INSERT INTO orders (product_id, count) VALUES (1, 50)")
	token := pgLSN(t, pg.DSN)
	for _, name := range []string{"products", "orders"} {
		if err := a.Refresh(name); err != nil {
			t.Fatal(err)
		}
	}
	runtimetest.WaitWatermark(t, b, "rankings", token)
	want = pgRankings(t, pg.DSN)
	if got, _ := query(t, b, rankingsQuery); !equal(got, want) {
		t.Errorf("B after the order=%q, want Postgres's %q", got, want)
	}
}

func pgExec(t *testing.T, dsn, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("exec: %v", err)
	}
}

func pgLSN(t *testing.T, dsn string) position.LSN {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&s); err != nil {
		t.Fatal(err)
	}
	lsn, err := position.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return lsn
}

// pgRankings runs the recipe's app query over the view's SQL in Postgres.
func pgRankings(t *testing.T, dsn string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "select name, count from ("+runtimetest.RankingsSQL+") rankings order by count desc limit 5")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		var count *int64
		if err := rows.Scan(&name, &count); err != nil {
			t.Fatal(err)
		}
		c := "(null)"
		if count != nil {
			c = fmt.Sprint(*count)
		}
		out = append(out, name+"|"+c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
