package chaos

import (
	"context"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
)

// readyPoll is how often the runner polls a restarted service and the
// rankings after a fault: the granularity of the Start and Recover columns.
const readyPoll = 100 * time.Millisecond

// ready reports whether a service answers as ready: a runtime's /v1/ready,
// the api's /readyz, Postgres accepting a query.
func ready(ctx context.Context, c *Client, postgresURL, service string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var url string
	switch service {
	case ServicePostgres:
		conn, err := pgx.Connect(ctx, postgresURL)
		if err != nil {
			return false
		}
		defer conn.Close(context.Background())
		var one int
		return conn.QueryRow(ctx, "SELECT 1").Scan(&one) == nil
	case ServiceAccelerated:
		url = c.AcceleratedURL + "/v1/ready"
	case ServiceMaterialized:
		url = c.MaterializedURL + "/v1/ready"
	case ServiceAPI:
		url = c.API + "/readyz"
	default:
		return false
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
