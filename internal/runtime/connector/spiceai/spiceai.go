package spiceai

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/flightsqlsrc"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// Dataset params this connector reads; any other "spiceai_" param is an error.
const (
	ParamEndpoint = "spiceai_endpoint"
	ParamAPIKey   = "spiceai_api_key"
	// ParamTLSCA is a PEM file of the CAs that sign the endpoint's certificate,
	// for a TLS endpoint whose certificate the system's roots do not verify.
	ParamTLSCA = "spiceai_tls_ca_certificate_file"
)

// DefaultEndpoint is Spice.ai Cloud's Flight endpoint, upstream's default.
const DefaultEndpoint = "https://flight.spiceai.io"

var knownParams = []string{ParamEndpoint, ParamAPIKey, ParamTLSCA}

// Config is a spice.ai dataset's connection settings, built by ParseParams.
type Config struct {
	Endpoint flightsqlsrc.Endpoint
	// APIKey is the password of the Basic handshake (empty user), as the Spice
	// SDKs send it. Empty is allowed: a runtime without API keys accepts any.
	APIKey string
}

// ParseParams validates a dataset's params and builds its Config.
func ParseParams(params map[string]string) (Config, error) {
	if err := flightsqlsrc.CheckParams(params, "spiceai_", "spice.ai", knownParams); err != nil {
		return Config{}, err
	}
	raw := strings.TrimSpace(params[ParamEndpoint])
	if raw == "" {
		raw = DefaultEndpoint
	}
	ep, err := flightsqlsrc.ParseEndpoint(raw)
	if err != nil {
		return Config{}, fmt.Errorf("param %s: %w", ParamEndpoint, err)
	}
	if ep, err = flightsqlsrc.WithCA(ep, ParamEndpoint, ParamTLSCA, params[ParamTLSCA]); err != nil {
		return Config{}, err
	}
	return Config{Endpoint: ep, APIKey: params[ParamAPIKey]}, nil
}

// Source reads one table of a Spice runtime over plain Arrow Flight. It
// implements engine.Source. Create it with NewSource, adjust the exported fields,
// then Open.
type Source struct {
	// Allocator backs the record batches read. Default memory.DefaultAllocator.
	Allocator memory.Allocator

	cfg   Config
	table string

	mu     sync.Mutex
	conn   *grpc.ClientConn
	client flight.Client
}

var (
	_ engine.Source         = (*Source)(nil)
	_ flightsqlsrc.Upstream = (*Source)(nil)
)

// NewSource returns a Source for table, used in SQL as written.
func NewSource(cfg Config, table string) *Source {
	return &Source{Allocator: memory.DefaultAllocator, cfg: cfg, table: table}
}

// Open creates the connection; it does not connect.
func (s *Source) Open(context.Context) error {
	if s.cfg.Endpoint.Target == "" {
		return errors.New("open spice.ai source: no endpoint; build the Config with ParseParams")
	}
	if strings.TrimSpace(s.table) == "" {
		return errors.New("open spice.ai source: no table; write from: spice.ai:<table>")
	}
	conn, err := flightsqlsrc.Dial(s.cfg.Endpoint)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		conn.Close()
		return errors.New("open spice.ai source: already open")
	}
	s.conn, s.client = conn, flight.NewClientFromConn(conn, nil)
	return nil
}

// Close closes the connection. It is safe to call more than once.
func (s *Source) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.conn.Close()
		s.conn, s.client = nil, nil
	}
}

// call handshakes (every call, as upstream's connector does) and returns a
// context carrying the bearer token.
func (s *Source) call(ctx context.Context) (flight.Client, context.Context, error) {
	s.mu.Lock()
	c := s.client
	s.mu.Unlock()
	if c == nil {
		return nil, nil, errors.New("spice.ai source is not open")
	}
	auth, err := flightsqlsrc.Handshake(ctx, c, "", s.cfg.APIKey)
	if err != nil {
		return nil, nil, err
	}
	return c, metadata.AppendToOutgoingContext(ctx, wire.MetadataAuthorization, auth), nil
}

func (s *Source) explain(op string, err error) error {
	switch status.Code(err) {
	case codes.Unavailable:
		return fmt.Errorf("%s %s: spice.ai endpoint %s is unavailable: %w; the dataset keeps its last data and refreshes once it answers", op, s.table, s.cfg.Endpoint, err)
	case codes.Unauthenticated, codes.PermissionDenied:
		return fmt.Errorf("%s %s: spice.ai endpoint %s refused the API key: %w; check %s", op, s.table, s.cfg.Endpoint, err, ParamAPIKey)
	default:
		return fmt.Errorf("%s %s from spice.ai endpoint %s: %w", op, s.table, s.cfg.Endpoint, err)
	}
}

// columns asks for the table's columns with GetSchema(CMD = "SELECT * FROM t").
func (s *Source) columns(ctx context.Context, c flight.Client) ([]string, error) {
	res, err := c.GetSchema(ctx, rawDescriptor("SELECT * FROM "+s.table))
	if err != nil {
		return nil, err
	}
	schema, err := flight.DeserializeSchema(res.GetSchema(), s.Allocator)
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	cols := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = f.Name
	}
	return cols, nil
}

// Scan reads the table's columns (or req's) with GetFlightInfo(CMD = SQL text)
// and DoGet, streaming them to fn.
func (s *Source) Scan(ctx context.Context, req engine.ScanRequest, fn func(engine.Snapshot) error) error {
	c, ctx, err := s.call(ctx)
	if err != nil {
		return s.explain("read", err)
	}
	cols := req.Columns
	if len(cols) == 0 {
		if cols, err = s.columns(ctx, c); err != nil {
			return s.explain("read", err)
		}
	}
	sql, err := engine.ScanSQL(s.table, cols, req)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.table, err)
	}
	var fnErr error
	err = flightsqlsrc.Fetch(ctx, c, rawDescriptor(sql), s.Allocator, func(snap engine.Snapshot) error {
		fnErr = fn(snap)
		return fnErr
	})
	if err != nil && fnErr == nil {
		return s.explain("read", err)
	}
	return err
}

// Subscribe opens a subscription to the table (see flightsqlsrc.Stream). An
// upstream without subscriptions (Spice.ai Cloud) answers Unimplemented, which
// the error keeps.
func (s *Source) Subscribe(ctx context.Context, since position.LSN) (*flightsqlsrc.Stream, error) {
	c, ctx, err := s.call(ctx)
	if err != nil {
		return nil, s.explain("subscribe to", err)
	}
	st, err := flightsqlsrc.Subscribe(ctx, c, s.table, since, s.Allocator, 0)
	if err != nil {
		return nil, s.explain("subscribe to", err)
	}
	return st, nil
}

// Ping handshakes and reads the table's schema.
func (s *Source) Ping(ctx context.Context) error {
	c, ctx, err := s.call(ctx)
	if err == nil {
		_, err = s.columns(ctx, c)
	}
	if err != nil {
		return s.explain("find", err)
	}
	return nil
}

func rawDescriptor(sql string) *flight.FlightDescriptor {
	return &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(sql)}
}
