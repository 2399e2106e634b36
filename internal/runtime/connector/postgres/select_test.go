package postgres_test

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

func TestSelectSQL_OrderByAndLimit(t *testing.T) {
	for _, tt := range []struct {
		req  engine.ScanRequest
		want string
	}{
		{engine.ScanRequest{}, `SELECT * FROM "public"."orders"`},
		{engine.ScanRequest{Where: "id > 3", OrderBy: "created_at desc", Limit: 10}, `SELECT * FROM "public"."orders" WHERE (id > 3) ORDER BY created_at desc LIMIT 10`},
		{engine.ScanRequest{Columns: []string{"id"}, Limit: 5}, `SELECT "id" FROM "public"."orders" LIMIT 5`},
	} {
		got, _ := postgres.SelectSQL(pgx.Identifier{"public", "orders"}, tt.req)
		if got != tt.want {
			t.Errorf("selectSQL(%+v) = %q, want %q", tt.req, got, tt.want)
		}
	}
}
