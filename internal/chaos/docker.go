package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// Compose services of docker-compose.yml.
const (
	ServicePostgres     = "postgres"
	ServiceAccelerated  = "accelerated"
	ServiceMaterialized = "materialized"
	ServiceAPI          = "api"
)

// Services are the stack's services in start order.
var Services = []string{ServicePostgres, ServiceAccelerated, ServiceMaterialized, ServiceAPI}

// Stack is the compose project under test, driven through the Docker Engine API.
type Stack = bench.Stack

// postgres runs one statement in Postgres at url, by the simple protocol (so
// that a DO block may commit), and returns the first column of its first row
// as text ("" when it returns none).
func postgres(ctx context.Context, url, sql string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", fmt.Errorf("connect to Postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	res, err := conn.PgConn().Exec(ctx, sql).ReadAll()
	if err != nil {
		return "", fmt.Errorf("%.60s: %w", sql, err)
	}
	for _, r := range res {
		if len(r.Rows) > 0 && len(r.Rows[0]) > 0 {
			return string(r.Rows[0][0]), nil
		}
	}
	return "", nil
}

func poll(ctx context.Context, limit time.Duration, what string, cond func() bool) error {
	return bench.Poll(ctx, limit, 250*time.Millisecond, what, cond)
}

func pollEvery(ctx context.Context, limit, every time.Duration, what string, cond func() bool) error {
	return bench.Poll(ctx, limit, every, what, cond)
}
