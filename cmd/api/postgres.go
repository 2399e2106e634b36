package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/pgdial"
)

// Where the api's Postgres password comes from, first match wins; the start
// line names it (postgres_password=...).
const (
	PasswordFromURL      = "POSTGRES_URL"      // the connection string's own
	PasswordFromSetting  = "POSTGRES_PASSWORD" // the api's setting, for a URL without one
	PasswordFromEnv      = "PGPASSWORD"        // libpq's variable, neither of the above given
	PasswordFromPassfile = "passfile"          // libpq's passfile or service file
	PasswordNone         = "none"              // trust or peer authentication
)

// postgresConfig parses POSTGRES_URL (a URL or key=value string) with the
// password of the first source that has one: the string's own, password
// (POSTGRES_PASSWORD), then what libpq's environment gives (PGPASSWORD, the
// passfile). pgx fills a string without a password from PGPASSWORD, which must
// not hide POSTGRES_PASSWORD: the api's own setting wins over the caller's
// environment. It returns the source it used.
func postgresConfig(url, password string) (*pgxpool.Config, string, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, "", fmt.Errorf("POSTGRES_URL: %w", err)
	}
	cc := pcfg.ConnConfig
	var source string
	switch {
	case ownPassword(url):
		source = PasswordFromURL
	case password != "":
		source, cc.Password = PasswordFromSetting, password
	case cc.Password == "":
		source = PasswordNone
	case cc.Password == os.Getenv("PGPASSWORD"):
		source = PasswordFromEnv
	default:
		source = PasswordFromPassfile
	}
	return pcfg, source, nil
}

// ownPassword reports whether a connection string carries a non-empty password
// itself, as pgx reads it: in a URL's user info or its password parameter, or
// as a password keyword.
func ownPassword(conn string) bool {
	rest, ok := strings.CutPrefix(conn, "postgresql://")
	if !ok {
		rest, ok = strings.CutPrefix(conn, "postgres://")
	}
	if !ok {
		// Keyword/value: later keywords win, so a password keyword of conn
		// replaces the marker put in front of it.
		const marker = "password=x-marker-no-password-x "
		c, err := pgconn.ParseConfig(marker + conn)
		return err == nil && c.Password != "" && c.Password != "x-marker-no-password-x"
	}
	// As pgx: user info ends at the first '@' before any '/'.
	if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
		if _, pw, found := strings.Cut(rest[:i], ":"); found && pw != "" {
			return true
		}
	}
	_, query, _ := strings.Cut(rest, "?")
	for pair := range strings.SplitSeq(query, "&") {
		if k, v, _ := strings.Cut(pair, "="); k == "password" && v != "" {
			return true
		}
	}
	return false
}

// newPool opens a pool of size connections with pcfg. It opens them all in the
// background from the start and keeps them: a burst then finds them ready
// instead of waiting for fresh connections (fork, authentication) at once, which
// on a busy machine can take longer than the acquire timeout.
func newPool(ctx context.Context, pcfg *pgxpool.Config, size int, name string) (*pgxpool.Pool, error) {
	pcfg.MaxConns = int32(size)
	pcfg.MinConns = pcfg.MaxConns
	if pcfg.ConnConfig.ConnectTimeout == 0 {
		// A connection being made outlives the request that asked for it (the
		// pool keeps it), so it may take longer than one acquire may wait.
		pcfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	// An attempt started while Postgres is down must not hold a pool slot for
	// the whole connect timeout after it is back.
	pgdial.Bound(&pcfg.ConnConfig.Config, pgdial.DefaultTimeout)
	pcfg.AfterConnect = orders.AfterConnect
	if pcfg.ConnConfig.RuntimeParams["application_name"] == "" {
		pcfg.ConnConfig.RuntimeParams["application_name"] = name
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("create postgres pool %s: %w", name, err)
	}
	return pool, nil
}
