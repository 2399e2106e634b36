package orders

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

const (
	// DefaultAcquireTimeout bounds the wait for a free pooled connection. Under a
	// burst, requests queue on the pool for up to this long, then fail with
	// ErrUnavailable (the api answers 503 with Retry-After) rather than pile up.
	DefaultAcquireTimeout = 5 * time.Second

	// DefaultQueryTimeout bounds the statements of one call once it holds a
	// connection.
	DefaultQueryTimeout = 5 * time.Second
)

const (
	// Each insert is one statement, so an order is written whole or not at all.
	insertSQL = `INSERT INTO orders (product_id, count) VALUES ($1, $2)
RETURNING id, product_id, count, created_at`
	insertRandomSQL = `INSERT INTO orders (product_id, count)
SELECT id, $1::int FROM products ORDER BY random() LIMIT 1
RETURNING id, product_id, count, created_at`
	lsnSQL = `SELECT pg_current_wal_lsn()::text`
)

// statement is one of the write's statements, prepared once per connection
// under its name.
type statement struct{ name, sql string }

var (
	insertStmt       = statement{"cqrs_orders_insert", insertSQL}
	insertRandomStmt = statement{"cqrs_orders_insert_random", insertRandomSQL}
	lsnStmt          = statement{"cqrs_orders_lsn", lsnSQL}
)

// orderFormats asks for the inserted row in binary: id, product_id, count,
// created_at.
var orderFormats = []int16{pgx.BinaryFormatCode, pgx.BinaryFormatCode, pgx.BinaryFormatCode, pgx.BinaryFormatCode}

// AfterConnect prepares a new pooled connection; set it as the pool's
// pgxpool.Config.AfterConnect. Where the server runs with synchronous_commit off,
// COMMIT returns before its commit record is written, and a token read right
// after could fall short of the write; the session then commits with
// synchronous_commit = local instead. Stronger settings are left alone.
func AfterConnect(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `SELECT set_config('synchronous_commit', 'local', false)
WHERE current_setting('synchronous_commit') = 'off'`)
	if err != nil {
		return fmt.Errorf("set synchronous_commit: %w", err)
	}
	return nil
}

// Store writes orders to Postgres and reads the ranking from it.
type Store struct {
	// AcquireTimeout bounds the wait for a pooled connection; DefaultAcquireTimeout
	// when zero.
	AcquireTimeout time.Duration
	// QueryTimeout bounds the statements of one call; DefaultQueryTimeout when zero.
	QueryTimeout time.Duration
	// PoolSetting names the setting that sizes the pool, for the error of a call
	// that found no free connection (say, POSTGRES_POOL_SIZE).
	PoolSetting string

	pool *pgxpool.Pool
	addr string
}

// NewStore returns a Store over pool. The pool's size bounds how many calls run at
// once; the others wait up to AcquireTimeout.
func NewStore(pool *pgxpool.Pool) *Store {
	cc := pool.Config().ConnConfig
	return &Store{pool: pool, addr: net.JoinHostPort(cc.Host, strconv.Itoa(int(cc.Port)))}
}

// Addr returns the host:port of the Postgres server, for messages.
func (s *Store) Addr() string { return s.addr }

// Create writes o and returns it with its read-your-writes token.
func (s *Store) Create(ctx context.Context, o NewOrder) (Order, position.LSN, error) {
	if err := o.Validate(); err != nil {
		return Order{}, 0, err
	}
	order, token, err := s.insert(ctx, insertStmt, o.ProductID, o.Count)
	if errors.Is(err, ErrUnknownProduct) {
		return Order{}, 0, unknownProduct(o.ProductID, err)
	}
	return order, token, err
}

// CreateRandom writes an order of a random product for a random count from 1 to
// RandomMaxCount, as the recipe's /orders does. It fails with ErrNoProducts when
// there is no product.
func (s *Store) CreateRandom(ctx context.Context) (Order, position.LSN, error) {
	order, token, err := s.insert(ctx, insertRandomStmt, rand.Int64N(RandomMaxCount)+1)
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, 0, &Error{Kind: ErrNoProducts, Msg: "there are no products to order: apply init.sql, which creates the recipe's products"}
	}
	return order, token, err
}

// insert runs one INSERT ... RETURNING in its own implicit transaction, then reads
// the token on the same connection, in one round trip.
//
// Why the token is safe: pg_current_wal_lsn() (the WAL written so far) is read
// after COMMIT has returned, and with synchronous_commit not off (AfterConnect
// sees to it) COMMIT returns only once its commit record is written and flushed.
// So the token is at or past the end of the write's commit record. Logical
// decoding delivers transactions in commit order, and a runtime's position is that
// of the last commit it applied, so any position at or past the token includes the
// write; so does any snapshot taken after the token was read.
//
// Both statements go in one pipeline, each followed by its own Sync: a Sync ends
// the implicit transaction before it (Postgres commits there, and answers
// ReadyForQuery only once the commit is flushed), and Postgres runs the LSN read
// only after that. (Without the Sync between them, as in a pgx.Batch or a
// multi-statement query, both would run in one implicit transaction and the LSN
// would be read before the commit.) The order counts as written only once the
// first Sync's ReadyForQuery has arrived.
func (s *Store) insert(ctx context.Context, stmt statement, args ...int64) (Order, position.LSN, error) {
	conn, err := s.acquire(ctx)
	if err != nil {
		return Order{}, 0, err
	}
	defer conn.Release()
	ctx, cancel := context.WithTimeout(ctx, s.queryTimeout())
	defer cancel()

	o, token, written, err := writeAndReadLSN(ctx, conn.Conn(), stmt, args)
	switch {
	case err == nil:
		return o, token, nil
	case !written && errors.Is(err, pgx.ErrNoRows):
		return Order{}, 0, err
	case !written:
		return Order{}, 0, s.wrap(ctx, "write order", err)
	}
	// The order is written; any connection's LSN read from now on is a valid
	// token, so try another before giving up.
	if token, err = readLSN(ctx, s.pool); err != nil {
		return o, 0, &Error{
			Kind: ErrUnavailable,
			Msg:  fmt.Sprintf("order %d was written, but its position could not be read from postgres at %s: do not repeat the order", o.ID, s.addr),
			Err:  err,
		}
	}
	return o, token, nil
}

// writeAndReadLSN sends stmt with args and the LSN read as two implicit
// transactions in one pipeline (see insert) and reads both answers. written
// says whether the insert has committed, whatever err says of the LSN read. An
// insert that returns no row fails with pgx.ErrNoRows.
func writeAndReadLSN(ctx context.Context, c *pgx.Conn, stmt statement, args []int64) (o Order, token position.LSN, written bool, err error) {
	// Prepared once per connection: later calls answer from pgx's cache without
	// a round trip.
	ins, err := c.Prepare(ctx, stmt.name, stmt.sql)
	if err != nil {
		return o, 0, false, err
	}
	lsn, err := c.Prepare(ctx, lsnStmt.name, lsnStmt.sql)
	if err != nil {
		return o, 0, false, err
	}
	var buf [2][20]byte
	var params [2][]byte
	for i, a := range args {
		params[i] = strconv.AppendInt(buf[i][:0], a, 10)
	}

	p := c.PgConn().StartPipeline(ctx)
	p.SendQueryStatement(ins, params[:len(args)], nil, orderFormats)
	p.SendPipelineSync()
	p.SendQueryStatement(lsn, nil, nil, nil)
	if err := p.Sync(); err != nil {
		return o, 0, false, err
	}
	defer func() {
		// Close reads what is left (all of it after an error) and returns the
		// connection to normal mode.
		if cerr := p.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()

	found := false
	rr, err := nextResult(p)
	if err != nil {
		return o, 0, false, err
	}
	rows := pgx.RowsFromResultReader(c.TypeMap(), rr)
	if rows.Next() {
		err = rows.Scan(&o.ID, &o.ProductID, &o.Count, &o.CreatedAt)
		found = err == nil
	}
	rows.Close()
	if err == nil {
		err = rows.Err()
	}
	if err != nil {
		return Order{}, 0, false, err
	}
	if err := nextSync(p); err != nil { // the commit
		return Order{}, 0, false, err
	}
	if !found {
		return Order{}, 0, false, pgx.ErrNoRows
	}
	o.CreatedAt = o.CreatedAt.UTC()

	if rr, err = nextResult(p); err != nil {
		return o, 0, true, err
	}
	var text string
	for rr.NextRow() {
		if v := rr.Values(); len(v) == 1 && v[0] != nil {
			text = string(v[0])
		}
	}
	if _, err := rr.Close(); err != nil {
		return o, 0, true, err
	}
	if err := nextSync(p); err != nil {
		return o, 0, true, err
	}
	if token, err = position.Parse(text); err != nil {
		return o, 0, true, err
	}
	return o, token, true, nil
}

// nextResult returns the pipeline's next answer, which must be a statement's.
func nextResult(p *pgconn.Pipeline) (*pgconn.ResultReader, error) {
	res, err := p.GetResults()
	if err != nil {
		return nil, err
	}
	rr, ok := res.(*pgconn.ResultReader)
	if !ok {
		return nil, fmt.Errorf("pipeline: got %T, want a statement's result", res)
	}
	return rr, nil
}

// nextSync reads the pipeline's next answer, which must be a Sync's.
func nextSync(p *pgconn.Pipeline) error {
	res, err := p.GetResults()
	if err != nil {
		return err
	}
	if _, ok := res.(*pgconn.PipelineSync); !ok {
		return fmt.Errorf("pipeline: got %T, want the end of a transaction", res)
	}
	return nil
}

type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func readLSN(ctx context.Context, q queryRower) (position.LSN, error) {
	var text string
	if err := q.QueryRow(ctx, lsnSQL).Scan(&text); err != nil {
		return 0, err
	}
	return position.Parse(text)
}

// Ranking reads the top products straight from Postgres, with the position the
// answer reflects.
//
// The position is read before the ranking's snapshot is taken, so it is a lower
// bound: every write whose token was handed out before it was read is visible.
// Both statements go in one batch (one round trip) at READ COMMITTED, where each
// statement takes its own snapshot, the ranking's after the LSN was read. (In a
// REPEATABLE READ transaction the snapshot would be taken by its first statement,
// the LSN read itself, making the position an upper bound instead.)
//
// Postgres is the source of truth, so a minimum position that it has reached is
// met by construction; one it has not reached was not handed out by this database
// and fails with ErrInvalid.
func (s *Store) Ranking(ctx context.Context, req ranking.Request) (ranking.Result, error) {
	conn, err := s.acquire(ctx)
	if err != nil {
		return ranking.Result{}, err
	}
	defer conn.Release()
	ctx, cancel := context.WithTimeout(ctx, s.queryTimeout())
	defer cancel()

	res, err := s.rank(ctx, conn)
	if err != nil {
		return ranking.Result{}, s.wrap(ctx, "read ranking", err)
	}
	if req.MinPosition > res.Position {
		return ranking.Result{}, &Error{Kind: ErrInvalid, Msg: fmt.Sprintf(
			"minimum position %s is ahead of postgres at %s (at %s): send a %s this api returned",
			req.MinPosition, s.addr, res.Position, wire.HeaderPosition)}
	}
	return res, nil
}

func (s *Store) rank(ctx context.Context, conn *pgxpool.Conn) (res ranking.Result, err error) {
	b := &pgx.Batch{}
	b.Queue(lsnSQL)
	b.Queue(ranking.PostgresQuery)
	br := conn.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil {
			err = cerr
		}
	}()
	var text string
	if err = br.QueryRow().Scan(&text); err != nil {
		return res, err
	}
	if res.Position, err = position.Parse(text); err != nil {
		return res, err
	}
	rows, err := br.Query()
	if err != nil {
		return res, err
	}
	res.Rows = make([]ranking.Row, 0, ranking.Limit)
	var r ranking.Row
	var count *int64
	_, err = pgx.ForEachRow(rows, []any{&r.Name, &count}, func() error {
		r.Count = 0
		if count != nil {
			r.Count = *count
		}
		res.Rows = append(res.Rows, r)
		return nil
	})
	return res, err
}

func (s *Store) queryTimeout() time.Duration {
	if s.QueryTimeout <= 0 {
		return DefaultQueryTimeout
	}
	return s.QueryTimeout
}

// acquire takes a pooled connection, waiting at most AcquireTimeout.
func (s *Store) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	timeout := s.AcquireTimeout
	if timeout <= 0 {
		timeout = DefaultAcquireTimeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := s.pool.Acquire(actx)
	if err == nil {
		return conn, nil
	}
	if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		setting := s.PoolSetting
		if setting == "" {
			setting = "the pool size"
		}
		return nil, &Error{
			Kind: ErrUnavailable,
			Msg: fmt.Sprintf("postgres at %s is busy: no pooled connection came free within %s; retry shortly, or raise %s (now %d)",
				s.addr, timeout, setting, s.pool.Config().MaxConns),
			Err: err,
		}
	}
	return nil, s.wrap(ctx, "connect", err)
}

// wrap translates a driver error into an *Error. The caller's own cancellation
// keeps its identity.
func (s *Store) wrap(ctx context.Context, op string, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("%s: %w", op, context.Canceled)
	}
	e := &Error{Kind: kindOf(err), Err: err}
	switch e.Kind {
	case ErrUnavailable:
		if badPassword(err) {
			e.Msg = fmt.Sprintf("%s: postgres at %s rejected the password (%s): check the password of POSTGRES_URL or POSTGRES_PASSWORD "+
				"(the compose stack's is in secrets.env); a Postgres volume keeps the password it was first initialised with, "+
				"see docs/operations.md", op, s.addr, causeOf(err))
			break
		}
		if ctx.Err() != nil {
			e.Msg = fmt.Sprintf("%s: postgres at %s did not answer in time (query timeout %s); retry shortly", op, s.addr, s.queryTimeout())
		} else {
			e.Msg = fmt.Sprintf("%s: postgres at %s is unavailable (%s); retry shortly", op, s.addr, causeOf(err))
		}
	case ErrSchema:
		e.Msg = fmt.Sprintf("%s: the database at %s lacks the recipe's tables (%s): apply init.sql", op, s.addr, causeOf(err))
	case ErrInvalid:
		e.Msg = fmt.Sprintf("%s: postgres rejected the order (%s)", op, causeOf(err))
	case ErrUnknownProduct:
		e.Msg = op + ": unknown product"
	default:
		e.Msg = fmt.Sprintf("%s: postgres at %s", op, s.addr)
	}
	return e
}

// causeOf is the short reason of a driver error: the server's message when it
// sent one.
func causeOf(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Message
	}
	return err.Error()
}

// Head reads Postgres's present position (pg_current_wal_lsn()): every token
// this api has handed out is at or before it.
func (s *Store) Head(ctx context.Context) (position.LSN, error) {
	conn, err := s.acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	ctx, cancel := context.WithTimeout(ctx, s.queryTimeout())
	defer cancel()
	lsn, err := readLSN(ctx, conn)
	if err != nil {
		return 0, s.wrap(ctx, "read postgres's position", err)
	}
	return lsn, nil
}

// Ping checks that Postgres answers, bounded like any call.
func (s *Store) Ping(ctx context.Context) error {
	conn, err := s.acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	ctx, cancel := context.WithTimeout(ctx, s.queryTimeout())
	defer cancel()
	if err := conn.Ping(ctx); err != nil {
		return s.wrap(ctx, "ping", err)
	}
	return nil
}
