package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// Batch bounds: a record batch ends at whichever comes first, so memory is bounded
// by the batch, not by the table.
const (
	DefaultBatchRows  = 64 * 1024
	DefaultBatchBytes = 64 << 20 // bytes of Postgres values, about the Arrow size
)

// Log attribute keys.
const (
	logTable = "table"
	logLSN   = "lsn"
	logRows  = "rows"
)

// Source reads one Postgres table or view. It implements engine.Source. Create it
// with NewSource, adjust the exported fields, then Open.
type Source struct {
	// Logger receives one debug line per scan; nil means slog.Default().
	Logger *slog.Logger
	// Allocator backs the Arrow record batches. Default memory.DefaultAllocator.
	Allocator memory.Allocator
	// BatchRows is the most rows in one record batch. Default DefaultBatchRows.
	BatchRows int
	// BatchBytes ends a batch early once its values reach this many bytes, so wide
	// rows stay bounded too. Default DefaultBatchBytes.
	BatchBytes int

	cfg    Config
	table  string
	ident  pgx.Identifier
	target target

	mu   sync.Mutex
	pool *pgxpool.Pool
}

var _ engine.Source = (*Source)(nil)

// NewSource returns a Source for table ("public.orders" or "orders"; unquoted
// names fold to lower case as in Postgres, double-quoted ones are taken as they are).
func NewSource(cfg Config, table string) *Source {
	return &Source{
		Allocator:  memory.DefaultAllocator,
		BatchRows:  DefaultBatchRows,
		BatchBytes: DefaultBatchBytes,
		cfg:        cfg,
		table:      table,
		target:     targetOf(cfg, table),
	}
}

// Open validates the table name and creates the connection pool. It does not
// connect: a Postgres that is down when the runtime starts is not an error here;
// Scan and Ping report it (and succeed once Postgres is up).
func (s *Source) Open(ctx context.Context) error {
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if s.cfg.PoolConfig == nil {
		return errors.New("open postgres source: no connection settings; build the Config with ParseParams")
	}
	ident, err := parseTable(s.table)
	if err != nil {
		return err
	}
	pc := s.cfg.PoolConfig.Copy()
	if s.cfg.PoolSize > 0 {
		pc.MaxConns = s.cfg.PoolSize
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return fmt.Errorf("open postgres pool: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pool != nil {
		pool.Close()
		return errors.New("open postgres source: already open")
	}
	s.ident, s.pool = ident, pool
	return nil
}

// Close closes the pool. It is safe to call more than once, and before Open.
func (s *Source) Close() {
	s.mu.Lock()
	pool := s.pool
	s.mu.Unlock()
	if pool != nil {
		pool.Close() // idempotent; later Scans fail with a closed-pool error
	}
}

func (s *Source) getPool() *pgxpool.Pool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pool
}

// Ping connects (or takes an idle connection) and runs an empty query. Its errors
// are *Error values like Scan's.
func (s *Source) Ping(ctx context.Context) error {
	pool := s.getPool()
	if pool == nil {
		return ErrNotOpen
	}
	return s.target.wrap(ctx, "ping", pool.Ping(ctx))
}

// Scan reads the rows req selects from one REPEATABLE READ snapshot and calls fn
// once with a streaming reader over them. Snapshot.Position is the WAL position
// read just before the snapshot was taken: every commit that had returned by then
// is in the data.
//
// A column type that cannot be carried fails before any row is read
// (ErrUnsupportedType), a value that cannot fails while reading (ErrValue); both
// name the column. Failures talking to Postgres are *Error values naming the
// server, database and table. fn's own error is returned as it is. If fn returns
// nil but the reader failed, Scan returns the reader's error, so a half-read table
// is never taken for a whole one.
func (s *Source) Scan(ctx context.Context, req engine.ScanRequest, fn func(engine.Snapshot) error) (err error) {
	pool := s.getPool()
	if pool == nil {
		return ErrNotOpen
	}
	op := "scan " + s.table
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return s.target.wrap(ctx, op, err)
	}
	defer conn.Release() // a connection left mid-transaction is destroyed, not reused

	lsn, err := snapshotLSN(ctx, conn.Conn())
	if err != nil {
		return s.target.wrap(ctx, op, err)
	}
	if _, err := conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return s.target.wrap(ctx, op, err)
	}
	defer func() {
		if err != nil {
			rollback(ctx, conn.Conn())
		}
	}()

	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rd, err := s.query(qctx, conn.Conn(), op, req)
	if err != nil {
		return err
	}
	ferr := fn(engine.Snapshot{Reader: rd, Position: lsn})
	done, rows, batches := rd.done, rd.rows, rd.batches
	if !done {
		// fn stopped early: abandon the rest of the result instead of draining it.
		// The connection breaks and the pool replaces it.
		cancel()
		_, _ = rd.rr.Close()
	}
	rerr := rd.err
	rd.Release()
	switch {
	case ferr != nil:
		return ferr
	case rerr != nil:
		return rerr
	case !done:
		return nil
	}
	if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
		return s.target.wrap(ctx, op, err)
	}
	s.Logger.DebugContext(ctx, "postgres scan", logTable, s.table, logLSN, lsn.String(), logRows, rows, "batches", batches)
	return nil
}

// snapshotLSN reads the WAL position, in autocommit, before the scan's snapshot is
// taken. The order matters: every transaction whose COMMIT had returned when the
// position was read is visible to the later snapshot, so a writer's token (the
// pg_current_wal_lsn() it read after its COMMIT returned) that is <= this position
// names a write the data holds. Read inside the snapshot instead, the position
// could cover commits made after the snapshot was taken, which the data would
// lack. Reading first lets the data hold a few commits past the position; a
// position is a lower bound, so that only makes the data fresher than claimed.
//
// The one gap: a commit in flight at the read (its record written, the transaction
// not yet visible) is <= the position but missing from the data. Its writer reads
// its token only after the commit became visible, and the position only grows, so
// that token is >= this position, and equal only if no WAL at all was written in
// between. We accept that.
func snapshotLSN(ctx context.Context, conn *pgx.Conn) (position.LSN, error) {
	var s string
	if err := conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&s); err != nil {
		return 0, err
	}
	return position.Parse(s)
}

// rollback ends a failed scan's transaction so the connection can be reused. If
// that fails the connection is destroyed on release anyway.
func rollback(ctx context.Context, conn *pgx.Conn) {
	if conn.IsClosed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = conn.Exec(ctx, "ROLLBACK")
}

// selectSQL builds the scan's SELECT; the Since bound, if any, is parameter $1.
func selectSQL(table pgx.Identifier, req engine.ScanRequest) (string, []any) {
	var b strings.Builder
	b.WriteString("SELECT ")
	if len(req.Columns) == 0 {
		b.WriteString("*")
	}
	for i, c := range req.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pgx.Identifier{c}.Sanitize())
	}
	b.WriteString(" FROM ")
	b.WriteString(table.Sanitize())
	var conds []string
	if w := strings.TrimSpace(req.Where); w != "" {
		conds = append(conds, "("+w+")")
	}
	var args []any
	if req.Since != nil {
		conds = append(conds, pgx.Identifier{req.Since.Column}.Sanitize()+" >= $1")
		args = append(args, req.Since.Value)
	}
	if len(conds) > 0 {
		b.WriteString(" WHERE ")
		b.WriteString(strings.Join(conds, " AND "))
	}
	if o := strings.TrimSpace(req.OrderBy); o != "" {
		b.WriteString(" ORDER BY " + o)
	}
	if req.Limit > 0 {
		b.WriteString(" LIMIT " + strconv.FormatInt(req.Limit, 10))
	}
	return b.String(), args
}

// parseTable reads "[schema.]table" as Postgres reads a qualified name: unquoted
// parts fold to lower case, double-quoted parts are kept ("" is a quote).
func parseTable(s string) (pgx.Identifier, error) {
	bad := fmt.Errorf("table %q: want [schema.]table, with double quotes around a name that has upper case letters, dots or spaces", s)
	var id pgx.Identifier
	rest := s
	for {
		var part string
		if strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			i := 1
			for {
				j := strings.IndexByte(rest[i:], '"')
				if j < 0 {
					return nil, bad
				}
				b.WriteString(rest[i : i+j])
				i += j + 1
				if i < len(rest) && rest[i] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				break
			}
			part, rest = b.String(), rest[i:]
		} else {
			j := strings.IndexByte(rest, '.')
			if j < 0 {
				j = len(rest)
			}
			part, rest = asciiLower(rest[:j]), rest[j:]
			if strings.ContainsAny(part, "\" \t\n") {
				return nil, bad
			}
		}
		if part == "" {
			return nil, bad
		}
		id = append(id, part)
		if rest == "" {
			break
		}
		if rest[0] != '.' || len(id) == 2 {
			return nil, bad
		}
		rest = rest[1:]
	}
	return id, nil
}

// asciiLower folds A-Z only, as Postgres does for unquoted identifiers.
func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}
