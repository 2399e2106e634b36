package postgres

import (
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/pgdial"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Dataset params this connector reads. Every other param starting with "pg_" is an
// error, so a typo never silently falls back to a default.
const (
	ParamHost             = "pg_host"
	ParamPort             = "pg_port"
	ParamDB               = "pg_db"
	ParamUser             = "pg_user"
	ParamPass             = "pg_pass"
	ParamSSLMode          = "pg_sslmode"
	ParamSSLRootCert      = "pg_sslrootcert"
	ParamConnectionString = "pg_connection_string"
	ParamPoolSize         = "connection_pool_size"
	ParamReplicationSlot  = "pg_replication_slot"
	ParamPublication      = "pg_publication"
)

// Defaults applied when neither a param, the connection string nor a libpq
// environment variable (PGPORT, PGSSLMODE, ...) says otherwise.
const (
	DefaultPort = 5432
	// DefaultSSLMode is "prefer": use TLS when the server offers it, plain TCP when it
	// does not. Upstream Spice defaults to verify-full, which fails against the plain
	// local Postgres most people start with and shows up as opaque pool time-outs.
	// Set pg_sslmode: verify-full (with pg_sslrootcert) for a server across a network
	// you do not trust.
	DefaultSSLMode  = "prefer"
	DefaultPoolSize = 5
	// DefaultConnectTimeout bounds one connection attempt, so an unreachable host
	// fails with a clear error instead of hanging a refresh. connect_timeout in
	// pg_connection_string overrides it.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultApplicationName shows up in pg_stat_activity unless the connection
	// string or PGAPPNAME names the application.
	DefaultApplicationName = "cqrs-spice"
)

// SSLModes lists the values pg_sslmode accepts.
var SSLModes = []string{"disable", "require", "prefer", "verify-ca", "verify-full"}

// knownParams are the pg_* params (and connection_pool_size) this connector accepts.
var knownParams = []string{
	ParamHost, ParamPort, ParamDB, ParamUser, ParamPass, ParamSSLMode, ParamSSLRootCert,
	ParamConnectionString, ParamPoolSize, ParamReplicationSlot, ParamPublication,
}

// Config is a Postgres dataset's connection settings, built by ParseParams.
type Config struct {
	// PoolConfig holds the connection settings (host, port, database, user,
	// password, TLS). Its MaxConns is replaced by PoolSize when the Source opens.
	PoolConfig *pgxpool.Config
	// PoolSize is the most connections the Source keeps open (connection_pool_size,
	// else pool_max_conns in pg_connection_string, else DefaultPoolSize).
	PoolSize int32
	// ReplicationSlot and Publication are pg_replication_slot and pg_publication,
	// used by refresh_mode: changes. Empty when not given.
	ReplicationSlot string
	Publication     string
}

// ParseParams validates a dataset's params and builds its Config.
//
// Precedence, highest first: the individual pg_* params; pg_connection_string (a
// libpq URL "postgres://..." or a keyword/value string "host=... dbname=...");
// libpq environment variables (PGHOST, PGPASSWORD, PGSSLMODE, ...); the Default*
// constants. Without pg_connection_string, pg_host, pg_db and pg_user are required.
//
// Every error names the param and says which values are allowed.
func ParseParams(params map[string]string) (Config, error) {
	if err := checkParamNames(params); err != nil {
		return Config{}, err
	}
	connString, err := connString(params)
	if err != nil {
		return Config{}, err
	}
	pc, err := pgxpool.ParseConfig(connString)
	if err != nil {
		if params[ParamConnectionString] != "" {
			return Config{}, fmt.Errorf("param %s: %w; want a libpq URL (postgres://user@host:5432/db) or keyword/value string (host=... dbname=...)", ParamConnectionString, err)
		}
		return Config{}, fmt.Errorf("connection params: %w", err)
	}
	if pc.ConnConfig.ConnectTimeout == 0 {
		pc.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	// A reconnect started while Postgres is down ends soon after it is back,
	// instead of waiting out the connect timeout (see package pgdial).
	pgdial.Bound(&pc.ConnConfig.Config, pgdial.DefaultTimeout)
	if pc.ConnConfig.RuntimeParams["application_name"] == "" {
		pc.ConnConfig.RuntimeParams["application_name"] = DefaultApplicationName
	}
	size, err := poolSize(params, pc)
	if err != nil {
		return Config{}, err
	}
	pc.MaxConns = size
	return Config{
		PoolConfig:      pc,
		PoolSize:        size,
		ReplicationSlot: params[ParamReplicationSlot],
		Publication:     params[ParamPublication],
	}, nil
}

// checkParamNames refuses pg_* params this connector does not know. Params without
// the prefix belong to other parts of the dataset and are left alone.
func checkParamNames(params map[string]string) error {
	var unknown []string
	for k := range params {
		if strings.HasPrefix(k, "pg_") && !slices.Contains(knownParams, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("unknown param %s; the postgres connector accepts %s", unknown[0], strings.Join(knownParams, ", "))
}

// connString validates the individual params and lays them over
// pg_connection_string, so that pgx parses one string with libpq's rules.
func connString(params map[string]string) (string, error) {
	base := strings.TrimSpace(params[ParamConnectionString])
	if base == "" {
		for _, k := range []string{ParamHost, ParamDB, ParamUser} {
			if params[k] == "" {
				return "", fmt.Errorf("param %s is required (or give %s)", k, ParamConnectionString)
			}
		}
	}
	if v, ok := params[ParamPort]; ok {
		if n, err := strconv.Atoi(v); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("param %s %q: want a TCP port number from 1 to 65535 (default %d)", ParamPort, v, DefaultPort)
		}
	}
	if v, ok := params[ParamSSLMode]; ok && !slices.Contains(SSLModes, v) {
		return "", fmt.Errorf("param %s %q: want one of %s (default %s)", ParamSSLMode, v, strings.Join(SSLModes, ", "), DefaultSSLMode)
	}
	if v, ok := params[ParamSSLRootCert]; ok {
		if err := checkRootCert(v); err != nil {
			return "", fmt.Errorf("param %s: %w; want the path of a PEM file with the CA certificate that signed the server's certificate", ParamSSLRootCert, err)
		}
	}
	for _, k := range []string{ParamHost, ParamDB, ParamUser} {
		if v, ok := params[k]; ok && v == "" {
			return "", fmt.Errorf("param %s is empty; give a value or leave the param out", k)
		}
	}

	var over [][2]string
	for _, kv := range [][2]string{
		{"host", ParamHost}, {"port", ParamPort}, {"dbname", ParamDB}, {"user", ParamUser},
		{"password", ParamPass}, {"sslmode", ParamSSLMode}, {"sslrootcert", ParamSSLRootCert},
	} {
		if v, ok := params[kv[1]]; ok {
			over = append(over, [2]string{kv[0], v})
		}
	}
	return overlay(base, over), nil
}

func checkRootCert(path string) error {
	pem, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		return fmt.Errorf("%s holds no PEM certificate", path)
	}
	return nil
}

// overlay appends settings to a connection string. libpq (and pgx) let a later
// keyword, or a URL query parameter, override what came before, which is exactly
// "individual params override the connection string".
func overlay(base string, settings [][2]string) string {
	if len(settings) == 0 {
		return base
	}
	if strings.HasPrefix(base, "postgres://") || strings.HasPrefix(base, "postgresql://") {
		q := make([]string, 0, len(settings))
		for _, kv := range settings {
			// libpq URLs only percent-decode: a '+' would stay a '+'.
			q = append(q, url.QueryEscape(kv[0])+"="+strings.ReplaceAll(url.QueryEscape(kv[1]), "+", "%20"))
		}
		sep := "?"
		if strings.Contains(base, "?") {
			sep = "&"
		}
		return base + sep + strings.Join(q, "&")
	}
	var b strings.Builder
	b.WriteString(base)
	for _, kv := range settings {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(kv[0])
		b.WriteString("='")
		b.WriteString(strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(kv[1]))
		b.WriteByte('\'')
	}
	return b.String()
}

// poolSize reads connection_pool_size; pool_max_conns in the connection string
// counts when the param is absent.
func poolSize(params map[string]string, pc *pgxpool.Config) (int32, error) {
	v, ok := params[ParamPoolSize]
	if !ok {
		if strings.Contains(params[ParamConnectionString], "pool_max_conns") {
			return pc.MaxConns, nil
		}
		return DefaultPoolSize, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("param %s %q: want a whole number of at least 1 (default %d)", ParamPoolSize, v, DefaultPoolSize)
	}
	return int32(n), nil
}
