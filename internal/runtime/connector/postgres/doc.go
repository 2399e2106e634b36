// Package postgres is the Postgres connector: it reads a table (or view) of a
// dataset declared as `from: postgres:[schema.]table` and hands it to the engine as
// a stream of Arrow record batches, stamped with the WAL position it reflects.
//
// Use:
//
//	cfg, err := postgres.ParseParams(dataset.Params) // validates every pg_* param
//	src := postgres.NewSource(cfg, "public.orders")
//	src.Logger = logger
//	err = src.Open(ctx) // creates the pool; does not connect
//	defer src.Close()
//	err = src.Scan(ctx, engine.ScanRequest{Where: "qty > 0"}, func(s engine.Snapshot) error {
//		for s.Reader.Next() { /* s.Reader.RecordBatch() */ }
//		return s.Reader.Err()
//	})
//
// # Params
//
//	pg_host, pg_db, pg_user   required unless pg_connection_string is given
//	pg_pass                   may be empty (trust or peer authentication)
//	pg_port                   5432
//	pg_sslmode                disable | require | prefer | verify-ca | verify-full; default prefer
//	pg_sslrootcert            PEM file with the CA that signed the server's certificate
//	pg_connection_string      libpq URL (postgres://user:pass@host:5432/db?sslmode=...) or
//	                          keyword/value string (host=... dbname=...); any libpq setting
//	connection_pool_size      5 (pool_max_conns in pg_connection_string counts when absent)
//	pg_replication_slot, pg_publication   accepted for refresh_mode: changes
//
// Precedence, highest first: the individual params, pg_connection_string, the libpq
// environment variables (PGHOST, PGPASSWORD, PGSSLMODE, ...), the defaults. Any
// other pg_* param is an error naming it.
//
// The default sslmode differs from upstream Spice, which defaults to verify-full: that
// fails against a plain local Postgres (no TLS, or a self-signed certificate), and
// upstream reports it as opaque pool time-outs. prefer uses TLS when the server offers
// it and plain TCP otherwise, like libpq's own default. It does not check the
// server's certificate, so across an untrusted network set pg_sslmode: verify-full
// and pg_sslrootcert.
//
// # Snapshot and position
//
// A scan uses one connection: it reads pg_current_wal_lsn() in autocommit, then runs
// BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY and the SELECT in that snapshot.
// Every commit a writer had seen return before the position was read is in the
// data, so a reader asking for "at least the position of my write" is answered
// correctly. The data may also hold commits slightly after the position, which only
// makes it fresher than claimed. Open does not connect: a Postgres that is down at
// start-up makes Scan and Ping fail (with ErrUnreachable) until it is back.
//
// The SELECT is `SELECT <columns or *> FROM <table> [WHERE (<Where>) AND <since
// column> >= $1]`, with identifiers quoted. Rows stream in batches of at most
// Source.BatchRows rows (64Ki) and Source.BatchBytes bytes of values (64 MiB), pulled
// from the connection as the reader advances, so memory is bounded by a batch.
// The schema comes from the statement's description, so an empty table has one.
// NOT NULL columns of the table become non-nullable fields.
//
// # Types
//
//	Postgres                                Arrow
//	smallint, integer, bigint               int16, int32, int64
//	real, double precision                  float32, float64
//	numeric(p,s), p <= 38                   decimal128(p,s)
//	numeric (no typmod)                     decimal128(38,10); more fractional digits
//	                                        are rounded, as a cast would
//	text, varchar, char(n), name            string (char(n) keeps its padding)
//	json, jsonb                             string (jsonb in Postgres' normal form)
//	uuid                                    string, canonical lower-case form
//	enum types                              string
//	boolean                                 bool
//	date                                    date32
//	time                                    time64[us]
//	timestamp                               timestamp[us]
//	timestamptz                             timestamp[us, UTC]
//	bytea                                   binary
//	one-dimensional arrays of the above     list<T> (empty and NULL elements kept)
//
// Any other type (point, interval, timetz, inet, composite, range, numeric with
// precision over 38, ...) fails the scan before any row is read, with an error
// naming the column and its type: cast it in a Postgres view and point the dataset
// at the view, or leave the column out of refresh_sql's select list. Values that
// have no Arrow form (numeric NaN or too large, infinite dates and timestamps,
// multi-dimensional arrays) fail the scan with ErrValue, naming the column.
//
// # Errors
//
// Failures talking to Postgres are *Error values. Their message names the operation,
// the server (host:port), the database and, where it applies, the table and user,
// then says what to change; errors.Is finds the kind (ErrAuth, ErrNoDatabase,
// ErrNoTable, ErrUnreachable, ...) and errors.As the *pgconn.PgError underneath.
package postgres
