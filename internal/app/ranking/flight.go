package ranking

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

const (
	// DefaultTimeout bounds one ranking query to a runtime. It is longer than the
	// runtime's own wait for a minimum position (10 s), so that the runtime's
	// explanation arrives before our deadline cuts it off.
	DefaultTimeout = 12 * time.Second

	// DefaultPingTimeout bounds one readiness probe.
	DefaultPingTimeout = 2 * time.Second

	// maxReconnectDelay caps gRPC's wait between attempts to reach a runtime that
	// is down. gRPC's own cap is 120 s, which would keep answering 503 for up to two
	// minutes after a restarted runtime is back. The wait starts when an attempt
	// has failed, and an attempt sent into a partition fails only after
	// DefaultPingTimeout, so the first read after the network is back can come
	// that long plus this late; a failed attempt costs a SYN.
	maxReconnectDelay = 500 * time.Millisecond

	// keepaliveTime and keepaliveTimeout make the client ping an idle connection
	// and drop it when the ping is not answered: after a network partition the
	// connection is dead, and without pings gRPC keeps sending every call into it
	// until TCP gives up, long after the network is back. 10 s is gRPC's floor; the
	// runtime's Flight server permits pings that often.
	keepaliveTime    = 10 * time.Second
	keepaliveTimeout = 3 * time.Second
)

// Protocols a Flight reads with.
const (
	// ProtocolFlight sends the SQL as the ticket of one DoGet: one round trip.
	// Spice's Flight service, and ours, run a ticket that is not a Flight SQL
	// message as SQL text.
	ProtocolFlight = "flight"
	// ProtocolFlightSQL asks GetFlightInfo(CommandStatementQuery) and then DoGets
	// each endpoint, as the recipe's database/sql driver does: two round trips.
	ProtocolFlightSQL = "flightsql"
)

// Flight reads a ranking from one runtime over Arrow Flight, all on one
// long-lived client: by default with one DoGet whose ticket is the query, or the
// Flight SQL way (see Protocol).
type Flight struct {
	// Protocol is ProtocolFlight (the default when empty) or ProtocolFlightSQL.
	Protocol string
	// Timeout bounds each Ranking call; DefaultTimeout when zero.
	Timeout time.Duration
	// PingTimeout bounds each Ping; DefaultPingTimeout when zero.
	PingTimeout time.Duration
	// Alloc allocates the record batches read; memory.DefaultAllocator when nil.
	Alloc memory.Allocator
	// APIKey, when set, is sent on every call as authorization: Bearer <key>,
	// which a runtime with runtime.auth.api-key accepts without a handshake.
	APIKey string
	// Coalesce lets concurrent reads of the same request share calls: reads
	// that arrive while a call is in flight wait for the next call, which starts
	// when it ends and answers all of them, so every answer is still from a
	// call that started after its read arrived. Off when false.
	Coalesce bool
	// TLS, when set, makes the client speak TLS, verifying the runtime's
	// certificate by its RootCAs (the system's roots when nil) and ServerName
	// (the host of addr when empty). Nil: plaintext gRPC, the default.
	TLS *tls.Config

	name, addr, query string
	ticket            *flight.Ticket // the query as a plain Flight ticket
	client            *flightsql.Client
	last              atomic.Pointer[answer] // the last answer decoded
	calls             coalescer
}

// NewFlight returns a reader that sends query to the runtime at addr (host:port;
// plaintext gRPC unless TLS is set). name says what the runtime is in error messages ("accelerated
// runtime"). Call Open before use.
func NewFlight(name, addr, query string) *Flight {
	return &Flight{name: name, addr: addr, query: query, ticket: &flight.Ticket{Ticket: []byte(query)}}
}

// Name returns the runtime's name, as given to NewFlight.
func (f *Flight) Name() string { return f.name }

// Addr returns the runtime's address, as given to NewFlight.
func (f *Flight) Addr() string { return f.addr }

// Open creates the gRPC client. It does not connect: the first call does, and a
// runtime that is down only fails the calls made while it is down.
func (f *Flight) Open() error {
	if f.addr == "" {
		return fmt.Errorf("open %s client: no address", f.name)
	}
	if f.Alloc == nil {
		f.Alloc = memory.DefaultAllocator
	}
	c, err := flightsql.NewClient(f.addr, nil, nil,
		grpc.WithTransportCredentials(TransportCredentials(f.TLS)),
		ConnectParams(),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: keepaliveTime, Timeout: keepaliveTimeout, PermitWithoutStream: true}))
	if err != nil {
		return fmt.Errorf("open %s client for %s: %w", f.name, f.addr, err)
	}
	c.Alloc = f.Alloc
	f.client = c
	return nil
}

// ConnectParams is how the api's gRPC clients of a runtime reconnect: attempts
// spaced 100 ms, growing to maxReconnectDelay, each given up after
// DefaultPingTimeout. The replicas' health watch dials with the same.
func ConnectParams() grpc.DialOption {
	return grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: maxReconnectDelay},
		MinConnectTimeout: DefaultPingTimeout,
	})
}

// TransportCredentials are the gRPC credentials of cfg: TLS with a copy of cfg
// (at least TLS 1.2), or plaintext when cfg is nil. The replicas' health watch
// dials with the same.
func TransportCredentials(cfg *tls.Config) credentials.TransportCredentials {
	if cfg == nil {
		return insecure.NewCredentials()
	}
	cfg = cfg.Clone()
	if cfg.MinVersion < tls.VersionTLS12 {
		cfg.MinVersion = tls.VersionTLS12
	}
	return credentials.NewTLS(cfg)
}

// Close closes the client; calls in flight fail.
func (f *Flight) Close() error {
	if f.client == nil {
		return nil
	}
	if err := f.client.Close(); err != nil {
		return fmt.Errorf("close %s client: %w", f.name, err)
	}
	return nil
}

// Ranking runs the reader's query. Errors are *SourceError, except the caller's
// own cancellation, which is returned as the context's error. With Coalesce,
// concurrent reads of the same request share calls (see coalescer).
func (f *Flight) Ranking(ctx context.Context, req Request) (Result, error) {
	timeout := f.timeout(f.Timeout, DefaultTimeout)
	if !f.Coalesce {
		return f.run(ctx, timeout, req)
	}
	return f.calls.do(ctx, req,
		func(ctx context.Context) (Result, error) { return f.run(ctx, timeout, req) },
		func(ctx context.Context, err error) error { return f.wrap(ctx, timeout, "query", err) },
		timeout)
}

// Ping runs the query once, bounded by PingTimeout: it succeeds when the runtime
// is reachable and the datasets the query reads are loaded.
func (f *Flight) Ping(ctx context.Context) error {
	_, err := f.run(ctx, f.timeout(f.PingTimeout, DefaultPingTimeout), Request{})
	return err
}

func (f *Flight) timeout(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func (f *Flight) run(ctx context.Context, timeout time.Duration, req Request) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ctx = outgoing(ctx, req)
	if f.APIKey != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+f.APIKey)
	}

	if f.Protocol != ProtocolFlightSQL {
		var res Result
		var err error
		res.Rows, res.Position, res.CacheStatus, err = f.fetch(ctx, f.ticket)
		if err != nil {
			return Result{}, f.wrap(ctx, timeout, "query", err)
		}
		return res, nil
	}
	var infoMD metadata.MD
	info, err := f.client.Execute(ctx, f.query, grpc.Header(&infoMD))
	if err != nil {
		return Result{}, f.wrap(ctx, timeout, "query", err)
	}
	var res Result
	for i, ep := range info.GetEndpoint() {
		rows, pos, cache, err := f.fetch(ctx, ep.GetTicket())
		if err != nil {
			return Result{}, f.wrap(ctx, timeout, "fetch", err)
		}
		if i == 0 {
			res.Rows = rows
		} else {
			// Clipped: the first endpoint's rows may be shared (see decode).
			res.Rows = append(slices.Clip(res.Rows), rows...)
		}
		// An answer spread over endpoints reflects the least of their positions.
		if i == 0 || pos < res.Position {
			res.Position = pos
		}
		if res.CacheStatus == "" {
			res.CacheStatus = cache
		}
	}
	// The position is decided when the query runs; a server may say so on
	// GetFlightInfo, on DoGet, or both.
	if res.Position.IsZero() {
		res.Position = positionOf(infoMD)
	}
	if res.CacheStatus == "" {
		res.CacheStatus = first(infoMD, wire.MetadataCacheStatus)
	}
	return res, nil
}

// fetch reads one ticket to its end and returns its rows with the position and
// cache status of its header. grpc.Header is filled in only once the stream has
// finished, which reading to the end guarantees. The rows may be shared with
// other answers (see decode): read-only.
func (f *Flight) fetch(ctx context.Context, t *flight.Ticket) ([]Row, position.LSN, string, error) {
	var md metadata.MD
	stream, err := f.client.Client.DoGet(ctx, t, grpc.Header(&md))
	if err != nil {
		return nil, 0, "", err
	}
	var msgs []*flight.FlightData
	for {
		fd, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, "", err
		}
		msgs = append(msgs, fd)
	}
	rows, err := f.decode(msgs)
	if err != nil {
		return nil, 0, "", err
	}
	return rows, positionOf(md), first(md, wire.MetadataCacheStatus), nil
}

// answer is a decoded answer: the messages it came in and the rows they hold.
type answer struct {
	msgs []*flight.FlightData
	rows []Row
}

// decode returns the rows of an answer's messages. An answer whose messages are
// byte for byte those of the last one decoded (the runtime's results cache sends
// the same bytes until the data changes) has the same rows, which are returned
// without decoding again: the same slice, so callers must not modify it.
func (f *Flight) decode(msgs []*flight.FlightData) ([]Row, error) {
	if last := f.last.Load(); last != nil && sameMessages(last.msgs, msgs) {
		return last.rows, nil
	}
	rows, err := decodeRows(msgs, f.Alloc)
	if err != nil {
		return nil, err
	}
	f.last.Store(&answer{msgs: msgs, rows: slices.Clip(rows)})
	return rows, nil
}

// decodeRows reads the rows of an IPC stream sent as Flight messages.
func decodeRows(msgs []*flight.FlightData, alloc memory.Allocator) ([]Row, error) {
	rdr, err := flight.NewRecordReader(&replay{msgs: msgs}, ipc.WithAllocator(alloc))
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	rows := make([]Row, 0, Limit)
	for rdr.Next() {
		if rows, err = appendRows(rows, rdr.RecordBatch()); err != nil {
			return nil, err
		}
	}
	if err := rdr.Err(); err != nil {
		return nil, err
	}
	return rows, nil
}

// replay serves messages already received to a flight.Reader.
type replay struct {
	msgs []*flight.FlightData
}

func (r *replay) Recv() (*flight.FlightData, error) {
	if len(r.msgs) == 0 {
		return nil, io.EOF
	}
	m := r.msgs[0]
	r.msgs = r.msgs[1:]
	return m, nil
}

// sameMessages reports whether a and b carry the same IPC messages: headers and
// bodies, which are all that decoding reads.
func sameMessages(a, b []*flight.FlightData) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].GetDataHeader(), b[i].GetDataHeader()) || !bytes.Equal(a[i].GetDataBody(), b[i].GetDataBody()) {
			return false
		}
	}
	return true
}

// outgoing attaches the request's minimum position and cache control as gRPC
// metadata.
func outgoing(ctx context.Context, req Request) context.Context {
	var kv []string
	if !req.MinPosition.IsZero() {
		kv = append(kv, wire.MetadataMinPosition, req.MinPosition.String())
	}
	if req.NoCache {
		kv = append(kv, wire.MetadataCacheControl, wire.NoCache)
	}
	if len(kv) == 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

func positionOf(md metadata.MD) position.LSN {
	lsn, err := position.Parse(first(md, wire.MetadataPosition))
	if err != nil {
		return 0 // the runtime did not say; zero means unknown
	}
	return lsn
}

func first(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// wrap translates an error of a call to the runtime into a *SourceError. It is the
// one place where gRPC status codes gain meaning for the api.
func (f *Flight) wrap(ctx context.Context, timeout time.Duration, op string, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("%s %s: %w", op, f.name, context.Canceled)
	}
	e := &SourceError{Source: f.name, Addr: f.addr, Err: err}
	if deadlinePassed(ctx) {
		e.Kind = ErrTimeout
		e.Detail = fmt.Sprintf("no answer within %s; check the runtime's load and logs", timeout)
		return e
	}
	var bad *badAnswerError
	if errors.As(err, &bad) {
		e.Kind, e.Detail = ErrBadAnswer, bad.msg
		return e
	}
	st, _ := status.FromError(err)
	e.Detail = st.Message()
	switch st.Code() {
	case codes.Unavailable, codes.ResourceExhausted, codes.Aborted, codes.FailedPrecondition, codes.Canceled:
		e.Kind = ErrUnavailable
		if st.Code() == codes.Unavailable && !strings.Contains(e.Detail, "not ready") {
			e.Detail += f.unavailableHint(e.Detail)
		}
	case codes.DeadlineExceeded:
		e.Kind = ErrTimeout
	default:
		e.Kind = ErrBadAnswer
		e.Detail = fmt.Sprintf("%s (%s)", e.Detail, st.Code())
	}
	return e
}

// unavailableHint says what to check when a runtime cannot be reached: TLS
// settings when the handshake failed, or when a plaintext client's connection
// was closed before the server spoke (what a TLS server does to it).
func (f *Flight) unavailableHint(detail string) string {
	if f.TLS != nil && tlsFailure(detail) {
		return "; the TLS handshake failed: check that the runtime serves TLS on this port " +
			"(runtime.tls in its spicepod) and that its certificate is signed by the CA the api trusts " +
			"and names the host dialled (or the TLS server name set)"
	}
	if f.TLS == nil && plainRejected(detail) {
		return "; check that it is running and listening on that address, " +
			"and whether it serves TLS (runtime.tls in its spicepod): then the api must dial it with TLS"
	}
	return "; check that it is running and listening on that address"
}

func tlsFailure(detail string) bool {
	for _, s := range []string{"tls:", "x509:", "authentication handshake failed"} {
		if strings.Contains(detail, s) {
			return true
		}
	}
	return false
}

func plainRejected(detail string) bool {
	for _, s := range []string{"server preface", "connection reset", "EOF"} {
		if strings.Contains(detail, s) {
			return true
		}
	}
	return false
}

// deadlinePassed reports whether ctx's deadline has come, or as good as: gRPC's
// own timer may fail the call a moment before the context's fires.
func deadlinePassed(ctx context.Context) bool {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && time.Until(dl) < 20*time.Millisecond
}
