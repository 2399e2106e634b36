//go:build e2e || browser

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cqrs-spice/cqrs/internal/chaos"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// stack is one compose project on free host ports.
type stack struct {
	project string
	env     []string
	api     string
	pgURL   string
	dir     string
}

func freePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// compose returns the compose command: $COMPOSE, else docker compose v2, else
// docker-compose.
func compose() []string {
	if c := os.Getenv("COMPOSE"); c != "" {
		return strings.Fields(c)
	}
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	return []string{"docker-compose"}
}

func (s *stack) run(tb testing.TB, args ...string) string {
	tb.Helper()
	c := compose()
	cmd := exec.Command(c[0], append(c[1:], args...)...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), s.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("%s %s: %v\n%s", strings.Join(c, " "), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// MustStack starts the compose project and tears it down at cleanup, checking that
// nothing is left behind; env holds extra settings for docker-compose.yml
// (API_WRITE_KEY=...).
func MustStack(t *testing.T, env ...string) *stack {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{project: fmt.Sprintf("cqrse2e%d", os.Getpid()), dir: dir}
	ports := map[string]int{}
	for _, name := range []string{"API_PORT", "POSTGRES_PORT", "ACCELERATED_HTTP_PORT", "ACCELERATED_FLIGHT_PORT",
		"ACCELERATED_METRICS_PORT", "MATERIALIZED_HTTP_PORT", "MATERIALIZED_FLIGHT_PORT", "MATERIALIZED_METRICS_PORT"} {
		ports[name] = freePort(t)
		s.env = append(s.env, fmt.Sprintf("%s=%d", name, ports[name]))
	}
	s.env = append(append(s.env, env...), "COMPOSE_PROJECT_NAME="+s.project)
	s.api = fmt.Sprintf("http://127.0.0.1:%d", ports["API_PORT"])
	// Postgres's password is the one compose hands the service, from secrets.env.
	if err := chaos.CheckSecrets(dir); err != nil {
		t.Fatal(err)
	}
	password := chaos.ReadEnvFile(filepath.Join(dir, "secrets.env"))["POSTGRES_PASSWORD"]
	s.pgURL = (&url.URL{Scheme: "postgres", User: url.UserPassword("postgres", password),
		Host: fmt.Sprintf("127.0.0.1:%d", ports["POSTGRES_PORT"]), Path: "/postgres", RawQuery: "sslmode=disable"}).String()
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(s.run(t, "logs", "--tail=60"))
		}
		s.run(t, "down", "-v", "--remove-orphans")
		out, _ := exec.Command("docker", "ps", "-aq", "--filter", "label=com.docker.compose.project="+s.project).Output()
		vols, _ := exec.Command("docker", "volume", "ls", "-q", "--filter", "label=com.docker.compose.project="+s.project).Output()
		if strings.TrimSpace(string(out)) != "" || strings.TrimSpace(string(vols)) != "" {
			t.Errorf("left behind: containers %q, volumes %q", out, vols)
		}
	})
	s.run(t, "up", "-d")
	waitFor(t, "the api to be ready", 5*time.Minute, func() bool {
		resp, err := http.Get(s.api + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return s
}

func waitFor(tb testing.TB, what string, limit time.Duration, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type row struct {
	Name  string `json:"name"`
	Count *int64 `json:"count"`
}

func rowsString(rows []row) string {
	var parts []string
	for _, r := range rows {
		c := "null"
		if r.Count != nil {
			c = fmt.Sprint(*r.Count)
		}
		parts = append(parts, r.Name+":"+c)
	}
	return strings.Join(parts, ",")
}

// ranking reads one ranking endpoint as JSON, asking for at least min.
func (s *stack) ranking(t *testing.T, path string, min position.LSN) (string, position.LSN, int) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.api+path, nil)
	req.Header.Set("Accept", "application/json")
	if min != 0 {
		req.Header.Set(wire.HeaderMinPosition, min.String())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(body), 0, resp.StatusCode
	}
	var rows []row
	if err := json.Unmarshal(body, &rows); err != nil {
		t.Fatalf("%s: decode %q: %v", path, body, err)
	}
	pos, _ := position.Parse(resp.Header.Get(wire.HeaderPosition))
	return rowsString(rows), pos, resp.StatusCode
}

// truth is the recipe's ranking computed by Postgres itself.
func (s *stack) truth(t *testing.T) string {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), s.pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `with a as (SELECT products.id, sum(count) as count FROM orders
		INNER JOIN products ON orders.product_id = products.id GROUP BY products.id)
		select name, count from products left join a on products.id = a.id order by count desc nulls last, name limit 5`)
	if err != nil {
		t.Fatal(err)
	}
	var out []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.Name, &r.Count); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return rowsString(out)
}

// postOrders posts n random orders and returns the highest position the api
// stamped on them: the token a read-your-writes read waits for.
func (s *stack) postOrders(t *testing.T, n int) position.LSN {
	t.Helper()
	var token position.LSN
	for range n {
		resp, err := http.Post(s.api+"/orders", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST /orders: %s", resp.Status)
		}
		lsn, err := position.Parse(resp.Header.Get(wire.HeaderPosition))
		if err != nil {
			t.Fatalf("POST /orders: bad %s header: %v", wire.HeaderPosition, err)
		}
		token = max(token, lsn)
	}
	return token
}
