package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultSeedChunk is how many orders one seeding statement inserts: small enough
// that each transaction streams to the runtimes in well under a second, large
// enough that a million orders take a few dozen statements.
const DefaultSeedChunk = 100_000

// DB runs the seeder's SQL. Postgres (pgx) and DockerPSQL implement it.
type DB interface {
	Exec(ctx context.Context, sql string) error
	Int(ctx context.Context, sql string) (int64, error)
}

// Postgres is a DB over one pgx connection.
type Postgres struct{ conn *pgx.Conn }

var (
	_ DB = (*Postgres)(nil)
	_ DB = (*DockerPSQL)(nil)
)

// OpenPostgres connects to url.
func OpenPostgres(ctx context.Context, url string) (*Postgres, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres for seeding: %w (check --postgres-url, or seed through --postgres-container)", err)
	}
	return &Postgres{conn: conn}, nil
}

// Exec runs sql.
func (p *Postgres) Exec(ctx context.Context, sql string) error {
	_, err := p.conn.Exec(ctx, sql)
	return err
}

// Int runs sql, which must answer one integer.
func (p *Postgres) Int(ctx context.Context, sql string) (int64, error) {
	var n int64
	err := p.conn.QueryRow(ctx, sql).Scan(&n)
	return n, err
}

// Close closes the connection.
func (p *Postgres) Close(ctx context.Context) error { return p.conn.Close(ctx) }

// DockerPSQL is a DB that runs psql inside the Postgres container, for a stack that
// does not publish Postgres' port.
type DockerPSQL struct {
	Docker    string // the docker CLI; "docker" when empty
	Container string // name or id of the Postgres container
	User      string // "postgres" when empty
	Database  string // "postgres" when empty
}

// Exec runs sql.
func (d *DockerPSQL) Exec(ctx context.Context, sql string) error {
	_, err := d.run(ctx, sql)
	return err
}

// Int runs sql, which must answer one integer.
func (d *DockerPSQL) Int(ctx context.Context, sql string) (int64, error) {
	out, err := d.run(ctx, sql)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("psql answered %q, want an integer", strings.TrimSpace(out))
	}
	return n, nil
}

func (d *DockerPSQL) run(ctx context.Context, sql string) (string, error) {
	docker, user, db := orDefault(d.Docker, "docker"), orDefault(d.User, "postgres"), orDefault(d.Database, "postgres")
	cmd := exec.CommandContext(ctx, docker, "exec", "-i", d.Container,
		"psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-U", user, "-d", db, "-c", sql)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker exec %s psql: %w: %s", d.Container, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Seeder grows the orders table to a given size, fast: one INSERT ... SELECT over
// generate_series per chunk, each a transaction of its own, with random products
// and counts as POST /orders makes them.
type Seeder struct {
	// Chunk is orders per statement; DefaultSeedChunk when zero.
	Chunk int
	// Out receives progress lines; nothing is printed when nil.
	Out io.Writer

	db DB
}

// NewSeeder returns a Seeder writing through db.
func NewSeeder(db DB) *Seeder { return &Seeder{db: db} }

// Count returns the number of orders.
func (s *Seeder) Count(ctx context.Context) (int64, error) {
	n, err := s.db.Int(ctx, "SELECT count(*) FROM orders")
	if err != nil {
		return 0, fmt.Errorf("count orders: %w", err)
	}
	return n, nil
}

// SeedTo inserts orders until the table holds at least total, and returns how many
// it added; none when it already holds as many.
func (s *Seeder) SeedTo(ctx context.Context, total int64) (int64, error) {
	have, err := s.Count(ctx)
	if err != nil {
		return 0, err
	}
	if have >= total {
		return 0, nil
	}
	products, err := s.db.Int(ctx, "SELECT count(*) FROM products")
	if err != nil {
		return 0, fmt.Errorf("count products: %w", err)
	}
	if products == 0 {
		return 0, fmt.Errorf("seed orders: the products table is empty; load init.sql into the database first")
	}
	chunk := int64(s.Chunk)
	if chunk <= 0 {
		chunk = DefaultSeedChunk
	}
	start, want := time.Now(), total-have
	var added int64
	for added < want {
		n := min(chunk, want-added)
		if err := s.db.Exec(ctx, seedSQL(n)); err != nil {
			return added, fmt.Errorf("seed %d orders: %w", n, err)
		}
		added += n
		s.printf("seed: %d/%d orders added (%d%%), table at %d, %.1fs\n",
			added, want, added*100/want, have+added, time.Since(start).Seconds())
	}
	return added, nil
}

// seedSQL inserts n orders of random products (those that exist) with counts 1-10.
func seedSQL(n int64) string {
	return fmt.Sprintf(`WITH p AS (SELECT array_agg(id ORDER BY id) AS ids FROM products)
INSERT INTO orders (product_id, count)
SELECT p.ids[1 + floor(random() * cardinality(p.ids))::int], 1 + floor(random() * 10)::int
FROM p, generate_series(1, %d)`, n)
}

func (s *Seeder) printf(format string, args ...any) {
	if s.Out != nil {
		fmt.Fprintf(s.Out, format, args...)
	}
}
