package flightsqlsrc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// DefaultMaxMessageBytes bounds one incoming gRPC message (one record batch).
const DefaultMaxMessageBytes = 256 << 20

// Dial returns a gRPC connection to ep. It does not connect: the first call does,
// and reconnects after an outage resolve the name again and are retried every
// half second at most (redial.go), so a runtime whose upstream comes back recovers
// quickly.
func Dial(ep Endpoint) (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if ep.TLS {
		creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12, RootCAs: ep.RootCAs})
	}
	opts := append(redialParams(), // see redial.go
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(DefaultMaxMessageBytes)),
		// Ping an idle connection and drop it when the ping goes unanswered, so a
		// connection that a network partition killed is replaced once the network
		// is back instead of swallowing calls until TCP gives up.
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: 3 * time.Second, PermitWithoutStream: true}))
	conn, err := grpc.NewClient(dialTarget(ep.Target), opts...)
	if err != nil {
		return nil, fmt.Errorf("dial flight endpoint %s: %w", ep, err)
	}
	return conn, nil
}

// Handshake runs a Basic handshake as the Spice SDKs do (no message sent, the
// answer's header read) and returns the "Bearer ..." authorization value to send
// on later calls.
func Handshake(ctx context.Context, c flight.Client, username, password string) (string, error) {
	authed, err := c.AuthenticateBasicToken(ctx, username, password)
	if err != nil {
		return "", fmt.Errorf("handshake: %w", err)
	}
	md, _ := metadata.FromOutgoingContext(authed)
	if v := md.Get(wire.MetadataAuthorization); len(v) > 0 {
		return v[len(v)-1], nil
	}
	return "", errors.New("handshake: the server sent no authorization header")
}

// PositionOf reads the spice-position of response headers; zero when absent
// (another vendor's server) or unreadable.
func PositionOf(md metadata.MD) position.LSN {
	v := md.Get(wire.MetadataPosition)
	if len(v) == 0 {
		return 0
	}
	lsn, err := position.Parse(v[0])
	if err != nil {
		return 0
	}
	return lsn
}

// Fetch runs one query: GetFlightInfo(desc), then DoGet of every endpoint, and
// calls fn once with a reader that streams them in order (nothing is buffered
// beyond the batch at hand). The snapshot's position is the spice-position of the
// GetFlightInfo answer. Endpoints are read over c's connection; locations are
// ignored.
func Fetch(ctx context.Context, c flight.Client, desc *flight.FlightDescriptor, mem memory.Allocator, fn func(engine.Snapshot) error) error {
	var md metadata.MD
	info, err := c.GetFlightInfo(ctx, desc, grpc.Header(&md))
	if err != nil {
		return err
	}
	rd, err := newEndpointReader(ctx, c, info, mem)
	if err != nil {
		return err
	}
	defer rd.Release()
	if err := fn(engine.Snapshot{Reader: rd, Position: PositionOf(md)}); err != nil {
		return err
	}
	return rd.Err()
}

// endpointReader streams the DoGet answers of a FlightInfo's endpoints as one
// array.RecordReader.
type endpointReader struct {
	refs    atomic.Int64
	ctx     context.Context
	cancel  context.CancelFunc
	client  flight.Client
	mem     memory.Allocator
	schema  *arrow.Schema
	pending []*flight.FlightEndpoint
	cur     *flight.Reader
	err     error
}

func newEndpointReader(ctx context.Context, c flight.Client, info *flight.FlightInfo, mem memory.Allocator) (*endpointReader, error) {
	ctx, cancel := context.WithCancel(ctx)
	r := &endpointReader{ctx: ctx, cancel: cancel, client: c, mem: mem, pending: info.GetEndpoint()}
	r.refs.Store(1)
	if len(r.pending) == 0 {
		schema, err := flight.DeserializeSchema(info.GetSchema(), mem)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("read schema of an answer without endpoints: %w", err)
		}
		r.schema = schema
		return r, nil
	}
	if err := r.open(); err != nil {
		cancel()
		return nil, err
	}
	r.schema = r.cur.Schema()
	return r, nil
}

// open starts the DoGet of the next endpoint.
func (r *endpointReader) open() error {
	ep := r.pending[0]
	r.pending = r.pending[1:]
	stream, err := r.client.DoGet(r.ctx, ep.GetTicket())
	if err != nil {
		return err
	}
	rd, err := flight.NewRecordReader(stream, ipc.WithAllocator(r.mem))
	if err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	if r.schema != nil && !rd.Schema().Equal(r.schema) {
		rd.Release()
		return fmt.Errorf("endpoints answer with different schemas: %s and %s", r.schema, rd.Schema())
	}
	r.cur = rd
	return nil
}

func (r *endpointReader) Next() bool {
	for r.err == nil {
		if r.cur != nil {
			if r.cur.Next() {
				return true
			}
			if err := r.cur.Err(); err != nil && !errors.Is(err, io.EOF) {
				r.err = err
				return false
			}
			r.cur.Release()
			r.cur = nil
		}
		if len(r.pending) == 0 {
			return false
		}
		r.err = r.open()
	}
	return false
}

func (r *endpointReader) Schema() *arrow.Schema { return r.schema }

func (r *endpointReader) RecordBatch() arrow.RecordBatch {
	if r.cur == nil {
		return nil
	}
	return r.cur.RecordBatch()
}

// Record is RecordBatch, for array.RecordReader.
func (r *endpointReader) Record() arrow.RecordBatch { return r.RecordBatch() }

func (r *endpointReader) Err() error { return r.err }

func (r *endpointReader) Retain() { r.refs.Add(1) }

func (r *endpointReader) Release() {
	if r.refs.Add(-1) != 0 {
		return
	}
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	r.cancel()
}
