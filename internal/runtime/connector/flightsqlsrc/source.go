package flightsqlsrc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// DefaultMaxBackoff caps the wait between reconnections of Watch.
const DefaultMaxBackoff = 5 * time.Second

// Log attribute keys.
const (
	logTable    = "table"
	logEndpoint = "endpoint"
)

// Source reads one table or view of another runtime (or any Flight SQL server). It
// implements engine.Source and engine.Notifier. Create it with NewSource,
// adjust the exported fields, then Open.
type Source struct {
	// Logger receives reconnections of Watch; nil means slog.Default().
	Logger *slog.Logger
	// Allocator backs the record batches read. Default memory.DefaultAllocator.
	Allocator memory.Allocator
	// MaxBackoff caps the wait between reconnections of Watch. Default
	// DefaultMaxBackoff.
	MaxBackoff time.Duration
	// HeartbeatTimeout is how long a subscription stream may stay silent before
	// it is dropped as dead; DefaultHeartbeatTimeout when zero.
	HeartbeatTimeout time.Duration

	cfg   Config
	table string

	mu     sync.Mutex
	conn   *grpc.ClientConn
	client *flightsql.Client
	auth   string // "Bearer ..." after a handshake
	found  *table // the discovered table, kept until a read fails
}

var (
	_ engine.Source   = (*Source)(nil)
	_ engine.Notifier = (*Source)(nil)
	_ Upstream        = (*Source)(nil)
)

// NewSource returns a Source for table as the upstream names it ("rankings", or
// "schema.table" / "catalog.schema.table" to disambiguate).
func NewSource(cfg Config, table string) *Source {
	return &Source{
		Allocator:  memory.DefaultAllocator,
		MaxBackoff: DefaultMaxBackoff,
		cfg:        cfg,
		table:      table,
	}
}

// Open creates the connection. It does not connect: an upstream that is down when
// the runtime starts is not an error here; Scan reports it, and succeeds once the
// upstream answers.
func (s *Source) Open(context.Context) error {
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if s.cfg.Endpoint.Target == "" {
		return errors.New("open flightsql source: no endpoint; build the Config with ParseParams")
	}
	if strings.TrimSpace(s.table) == "" {
		return errors.New("open flightsql source: no table; write from: flightsql:<table>")
	}
	conn, err := Dial(s.cfg.Endpoint)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		conn.Close()
		return errors.New("open flightsql source: already open")
	}
	s.conn = conn
	s.client = &flightsql.Client{Client: flight.NewClientFromConn(conn, nil), Alloc: s.Allocator}
	return nil
}

// Close closes the connection. It is safe to call more than once, and before Open.
func (s *Source) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.conn.Close()
		s.conn, s.client = nil, nil
	}
}

// call returns the client and a context that carries the bearer token, after a
// handshake when the source has credentials and no token yet.
func (s *Source) call(ctx context.Context) (*flightsql.Client, context.Context, error) {
	s.mu.Lock()
	c, auth := s.client, s.auth
	s.mu.Unlock()
	if c == nil {
		return nil, nil, errors.New("flightsql source is not open")
	}
	if auth == "" && (s.cfg.Username != "" || s.cfg.Password != "") {
		var err error
		if auth, err = Handshake(ctx, c.Client, s.cfg.Username, s.cfg.Password); err != nil {
			return nil, nil, err
		}
		s.mu.Lock()
		s.auth = auth
		s.mu.Unlock()
	}
	if auth != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, wire.MetadataAuthorization, auth)
	}
	return c, ctx, nil
}

// explain wraps an error of an upstream call so that it names the table and the
// endpoint and says what to do. A refused token is forgotten, so the next call
// handshakes again.
func (s *Source) explain(op string, err error) error {
	switch status.Code(err) {
	case codes.Unavailable:
		return fmt.Errorf("%s %s: flightsql endpoint %s is unavailable: %w; the dataset keeps its last data and refreshes once the upstream answers", op, s.table, s.cfg.Endpoint, err)
	case codes.Unauthenticated, codes.PermissionDenied:
		s.forgetAuth()
		return fmt.Errorf("%s %s: flightsql endpoint %s refused the credentials: %w; check %s and %s", op, s.table, s.cfg.Endpoint, err, ParamUsername, ParamPassword)
	default:
		return fmt.Errorf("%s %s from flightsql endpoint %s: %w", op, s.table, s.cfg.Endpoint, err)
	}
}

// Scan finds the table upstream, then streams SELECT of its columns (narrowed by
// req) to fn. The snapshot's position is what the upstream reports for the
// answer (zero when it reports none).
func (s *Source) Scan(ctx context.Context, req engine.ScanRequest, fn func(engine.Snapshot) error) error {
	c, ctx, err := s.call(ctx)
	if err != nil {
		return s.explain("read", err)
	}
	t, err := s.upstreamTable(ctx, c)
	if err != nil {
		return err
	}
	sql, err := selectSQL(t, req)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.table, err)
	}
	desc, err := statementDescriptor(sql)
	if err != nil {
		return err
	}
	var fnErr error
	err = Fetch(ctx, c.Client, desc, s.Allocator, func(snap engine.Snapshot) error {
		fnErr = fn(snap)
		return fnErr
	})
	if err != nil && fnErr == nil {
		s.forget() // the table may have moved or changed: find it again next time
		return s.explain("read", err)
	}
	return err
}

// Subscribe opens a subscription to the table (see Stream) whose snapshot is
// at or past since. An upstream without subscriptions answers Unimplemented,
// which the error keeps.
func (s *Source) Subscribe(ctx context.Context, since position.LSN) (*Stream, error) {
	c, callCtx, err := s.call(ctx)
	if err != nil {
		return nil, s.explain("subscribe to", err)
	}
	st, err := Subscribe(callCtx, c.Client, s.table, since, s.Allocator, s.HeartbeatTimeout)
	if err != nil {
		return nil, s.explain("subscribe to", err)
	}
	return st, nil
}

// upstreamTable returns the upstream table, discovering it with GetTables only the first
// time (and after a failed read): a chained runtime that refreshes on every
// pushed change would otherwise make its upstream list tables just as often.
func (s *Source) upstreamTable(ctx context.Context, c *flightsql.Client) (table, error) {
	s.mu.Lock()
	found := s.found
	s.mu.Unlock()
	if found != nil {
		return *found, nil
	}
	t, err := s.discover(ctx, c)
	if err != nil {
		return t, err
	}
	s.mu.Lock()
	s.found = &t
	s.mu.Unlock()
	return t, nil
}

// forgetAuth drops the bearer token, so the next call handshakes again.
func (s *Source) forgetAuth() {
	s.mu.Lock()
	s.auth = ""
	s.mu.Unlock()
}

func (s *Source) forget() {
	s.mu.Lock()
	s.found = nil
	s.mu.Unlock()
}

// Ping checks that the upstream answers and lists the table.
func (s *Source) Ping(ctx context.Context) error {
	c, ctx, err := s.call(ctx)
	if err != nil {
		return s.explain("find", err)
	}
	_, err = s.discover(ctx, c)
	return err
}

// statementDescriptor wraps sql in a Flight SQL CommandStatementQuery.
func statementDescriptor(sql string) (*flight.FlightDescriptor, error) {
	return commandDescriptor(&pb.CommandStatementQuery{Query: sql})
}

// commandDescriptor packs a Flight SQL command as a descriptor's command.
func commandDescriptor(cmd proto.Message) (*flight.FlightDescriptor, error) {
	a, err := anypb.New(cmd)
	if err != nil {
		return nil, fmt.Errorf("encode flight sql command: %w", err)
	}
	b, err := proto.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("encode flight sql command: %w", err)
	}
	return &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: b}, nil
}
