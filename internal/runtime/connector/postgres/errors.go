package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Kinds of failure. An *Error wraps one of them (when known) and the underlying
// driver error, so callers test with errors.Is and still reach *pgconn.PgError with
// errors.As.
var (
	// ErrNotOpen is returned by Scan and Ping before Open or after Close.
	ErrNotOpen = errors.New("postgres source is not open")
	// ErrUnreachable: no connection could be made (host down, wrong host or port,
	// server starting up or out of connections). Worth retrying.
	ErrUnreachable = errors.New("postgres is unreachable")
	// ErrTLS: the TLS negotiation failed (server offers none, certificate not trusted).
	ErrTLS = errors.New("postgres TLS negotiation failed")
	// ErrAuth: the server rejected the user or the password (SQLSTATE 28P01, 28000).
	ErrAuth = errors.New("postgres rejected the user or password")
	// ErrNoDatabase: the database does not exist (SQLSTATE 3D000).
	ErrNoDatabase = errors.New("database does not exist")
	// ErrNoTable: the table does not exist or is not visible (SQLSTATE 42P01).
	ErrNoTable = errors.New("table does not exist")
	// ErrPermission: the user lacks a privilege (SQLSTATE 42501).
	ErrPermission = errors.New("permission denied")
	// ErrUnsupportedType: a selected column has a type the connector cannot carry.
	ErrUnsupportedType = errors.New("unsupported column type")
	// ErrValue: a value cannot be represented in its Arrow type (numeric overflow,
	// infinite date or timestamp, multi-dimensional array).
	ErrValue = errors.New("value cannot be carried")
)

// Error is a failure talking to Postgres. Its message says what was being done,
// against which server and database, what went wrong and what to do about it.
type Error struct {
	Op       string // "connect", "ping", "scan public.orders"
	Addr     string // host:port of the first configured host
	Database string
	Kind     error  // one of the Err* sentinels, nil when unclassified
	Advice   string // what went wrong and what to do, in the user's terms
	Err      error  // the driver error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: postgres at %s, database %q", e.Op, e.Addr, e.Database)
	if e.Advice != "" {
		b.WriteString(": ")
		b.WriteString(e.Advice)
	}
	if e.Err != nil {
		b.WriteString(": ")
		// A server error says it all; its connect wrapper would repeat host and user.
		var pgErr *pgconn.PgError
		if errors.As(e.Err, &pgErr) {
			b.WriteString(pgErr.Error())
		} else {
			b.WriteString(e.Err.Error())
		}
	}
	return b.String()
}

// Unwrap returns the kind and the driver error.
func (e *Error) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Kind, e.Err}
}

// PasswordAdvice is what to check when the server rejects the password
// (SQLSTATE 28P01), for every path that connects.
const PasswordAdvice = "check pg_pass and pg_user (in the compose stack pg_pass is POSTGRES_PASSWORD of secrets.env; " +
	"a Postgres data volume keeps the password it was first initialised with, so a newer secrets.env does not change it: " +
	"docs/operations.md, Postgres's password)"

// target names the server, database, user and table a Source talks to, for errors.
type target struct {
	addr, database, user, table string
}

// wrap translates a driver error into an *Error. Errors of the caller's own making
// (context cancellation) keep their identity and only gain the location.
func (t target) wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	e := &Error{Op: op, Addr: t.addr, Database: t.database, Err: err}
	var pgErr *pgconn.PgError
	switch {
	case ctx.Err() != nil:
		// Cancelled or timed out by the caller; nothing to classify.
	case errors.As(err, &pgErr):
		e.Kind, e.Advice = t.explain(pgErr.Code)
	default:
		e.Kind, e.Advice = t.explainConnect(err)
	}
	return e
}

// explain maps a SQLSTATE to a kind and to advice a user can act on. It is the one
// place where Postgres error codes gain meaning.
func (t target) explain(code string) (kind error, advice string) {
	switch code {
	case "28P01":
		return ErrAuth, fmt.Sprintf("the server rejected the password for user %q: %s", t.user, PasswordAdvice)
	case "28000":
		return ErrAuth, fmt.Sprintf("the server rejected user %q (no such role, login not allowed, or no pg_hba.conf entry for this host, user, database and sslmode): check pg_user, pg_db and pg_sslmode, and the server's pg_hba.conf", t.user)
	case "3D000":
		return ErrNoDatabase, fmt.Sprintf("database %q does not exist: check pg_db, or create the database", t.database)
	case "42P01":
		return ErrNoTable, fmt.Sprintf("table %s does not exist or is not visible to user %q: check the dataset's from: (postgres:[schema.]table) and the user's search_path", t.table, t.user)
	case "3F000":
		return ErrNoTable, fmt.Sprintf("the schema of table %s does not exist: check the dataset's from: (postgres:[schema.]table)", t.table)
	case "42501":
		return ErrPermission, fmt.Sprintf("user %q lacks a privilege it needs: GRANT CONNECT ON DATABASE %s and GRANT SELECT ON %s to it", t.user, t.database, t.table)
	case "42703":
		return nil, fmt.Sprintf("a selected column does not exist in %s: check refresh_sql's select list and time_column", t.table)
	case "42601", "42883", "42804":
		return nil, fmt.Sprintf("the SQL sent for %s is not valid: check refresh_sql's WHERE clause", t.table)
	case "25006":
		return nil, fmt.Sprintf("the SQL sent for %s tried to write in a read-only transaction: refresh_sql may only read", t.table)
	case "53300":
		return ErrUnreachable, "the server has no connection slots left: lower connection_pool_size or raise the server's max_connections"
	case "57014":
		return nil, "the server cancelled the query (statement_timeout, or an administrator): raise statement_timeout for this user or narrow refresh_sql"
	case "57P01", "57P02", "57P03":
		return ErrUnreachable, "the server is starting up or shutting down; the runtime retries"
	}
	if strings.HasPrefix(code, "08") {
		return ErrUnreachable, "the connection to the server failed; the runtime retries"
	}
	return nil, ""
}

// explainConnect classifies errors that carry no SQLSTATE: the network and TLS.
func (t target) explainConnect(err error) (kind error, advice string) {
	var ce *pgconn.ConnectError
	var ne net.Error
	if !errors.As(err, &ce) && !errors.As(err, &ne) {
		return nil, ""
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "server refused TLS"):
		return ErrTLS, "the server does not offer TLS: set pg_sslmode to prefer or disable, or enable ssl on the server"
	case strings.Contains(msg, "x509:") || strings.Contains(msg, "tls:"):
		return ErrTLS, "the TLS handshake failed (is the server's certificate trusted?): give pg_sslrootcert the CA certificate that signed it, or use pg_sslmode require or prefer"
	}
	return ErrUnreachable, "cannot connect: check pg_host and pg_port, and that Postgres is running and accepts TCP connections; the runtime retries"
}

// targetOf describes where a pool config points.
func targetOf(cfg Config, table string) target {
	t := target{table: table}
	if cfg.PoolConfig != nil {
		cc := cfg.PoolConfig.ConnConfig
		t.addr = net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port)))
		t.database, t.user = cc.Database, cc.User
	}
	return t
}
