package flightsrv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// Defaults for Server's tunables.
const (
	// DefaultTicketTTL is how long a statement result executed by GetFlightInfo
	// waits for its DoGet. A ticket fetched later runs its query again.
	DefaultTicketTTL = 30 * time.Second
	// DefaultMaxTicketBytes bounds the results waiting for their DoGet; beyond it
	// the oldest are dropped (their DoGet runs the query again).
	DefaultMaxTicketBytes = 256 << 20
	// DefaultPreparedTTL is how long an unused prepared statement is kept.
	DefaultPreparedTTL = time.Hour
	// DefaultMaxPrepared bounds the prepared statements held; beyond it the least
	// recently used are closed.
	DefaultMaxPrepared = 10000
	// DefaultMaxPreparedBytes bounds the SQL texts of the prepared statements
	// held; beyond it the least recently used are closed.
	DefaultMaxPreparedBytes = 64 << 20
	// DefaultServerName and DefaultVersion are reported by GetSqlInfo.
	DefaultServerName = "cqrs-spice data runtime"
	DefaultVersion    = "dev"
	// DefaultMaxRecvMsgBytes bounds one incoming gRPC message (DoPut parameters).
	DefaultMaxRecvMsgBytes = 16 << 20
	// MinKeepaliveTime is the shortest interval at which clients may ping an
	// idle connection (gRPC's default is 5 minutes).
	MinKeepaliveTime = 5 * time.Second
)

// Catalog names, as upstream's runtime reports them.
const (
	Catalog  = "spice"
	DBSchema = "public"
)

// Engine is what the server needs from the engine; *engine.Engine implements it.
type Engine interface {
	Query(ctx context.Context, q engine.Query) (*engine.Result, error)
	Tables() []engine.TableInfo
	Watermark(name string) (position.LSN, error)
	Changed() <-chan struct{}
}

// Server serves plain Arrow Flight and Flight SQL on one port. Create it with New,
// adjust the exported fields, then Open; Close stops it.
type Server struct {
	// Logger receives unexpected errors (those answered with Internal); nil means
	// slog.Default().
	Logger *slog.Logger
	// Allocator backs the Arrow memory the server allocates itself (catalog
	// answers, decoded parameters). Default memory.DefaultAllocator.
	Allocator memory.Allocator
	// Metrics, when set, counts requests and their latency.
	Metrics *Metrics
	// TicketTTL, MaxTicketBytes, PreparedTTL, MaxPrepared and MaxPreparedBytes
	// bound the state held between calls; the Default* constants when zero.
	TicketTTL        time.Duration
	MaxTicketBytes   int64
	PreparedTTL      time.Duration
	MaxPrepared      int
	MaxPreparedBytes int64
	// ServerName and Version are reported by GetSqlInfo; DefaultServerName and
	// DefaultVersion when empty.
	ServerName string
	Version    string
	// PrimaryKeys, when set, returns the primary key columns of a dataset (from
	// its spicepod's acceleration.primary_key) for GetPrimaryKeys; nil means
	// none are reported.
	PrimaryKeys func(table string) []string
	// GRPCOptions are added to the gRPC server's options (TLS credentials, say).
	GRPCOptions []grpc.ServerOption
	// APIKeys, when not empty, are required on every call but health checks
	// (see auth.go); calls that would change state need a read-write one.
	APIKeys []apikey.Key
	// Ready says whether the runtime is ready to answer (every dataset loaded);
	// grpc.health.v1 on the Flight port reports SERVING only while it holds and
	// until Drain. Nil means always ready.
	Ready func() bool
	// ParamTypes, when set, returns the types of a query's placeholders, for
	// prepared statements' parameter schemas; nil leaves them out.
	ParamTypes func(ctx context.Context, sql string) ([]arrow.DataType, error)
	// Ordering, when set, returns the top-level ORDER BY of a subscribed
	// table or view on its output columns (named as in the snapshot); the
	// snapshot states it (wire.SubscriptionMeta.Order). Nil or empty: none.
	Ordering func(ctx context.Context, name string, columns []string) []wire.OrderKey
	// HeartbeatInterval is how long a subscription stream stays silent before
	// a heartbeat marker is sent; DefaultHeartbeatInterval when zero.
	HeartbeatInterval time.Duration
	// Throttle slows down sources that present wrong keys (see
	// apikey.Throttle); share one with the HTTP server. A private one when nil.
	Throttle *apikey.Throttle
	// PreAuthBytes and PreAuthRate bound what the server reads from a
	// connection until a call on it presents a valid key (with API keys only):
	// PreAuthBytes at once, growing back by PreAuthRate bytes a second; a
	// connection past it is closed. Calls are authenticated from their headers
	// before any of their messages is read. DefaultPreAuthBytes and
	// DefaultPreAuthRate when zero.
	PreAuthBytes, PreAuthRate int
	// MaxStreams bounds the calls one connection runs at once;
	// DefaultMaxStreams when zero.
	MaxStreams int
	// IdleTimeout closes a connection without calls for that long;
	// ConnectTimeout bounds a new connection's TLS handshake and HTTP/2
	// preface. DefaultIdleTimeout and DefaultConnectTimeout when zero.
	IdleTimeout, ConnectTimeout time.Duration

	engine Engine
	addr   string
	tokens map[apikey.Access]string // a handshake's bearer token per access level
	keys   *apikey.Keys

	mu       sync.Mutex
	lis      net.Listener
	grpc     *grpc.Server
	tickets  *tickets
	prepared *preparedStore
	conns    *connGuard
	health   *healthService
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// New returns a server that will listen on addr ("127.0.0.1:50051"; port 0 picks a
// free port, see Addr) and answer from e.
func New(addr string, e Engine) *Server {
	return &Server{
		Allocator: memory.DefaultAllocator,
		engine:    e,
		addr:      addr,
	}
}

// Addr returns the address the server listens on (useful with port 0); empty
// before Open.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lis == nil {
		return ""
	}
	return s.lis.Addr().String()
}

// Open binds the address and starts serving.
func (s *Server) Open() error {
	s.mu.Lock()
	open := s.lis != nil
	s.mu.Unlock()
	if open {
		return errors.New("open flight server: already open")
	}
	s.applyDefaults()
	lis, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("listen for flight on %s: %w; is another runtime using the port? pick another with --flight", s.addr, err)
	}
	s.tokens = make(map[apikey.Access]string, 2)
	for _, a := range []apikey.Access{apikey.ReadOnly, apikey.ReadWrite} {
		token := make([]byte, 16)
		if _, err := rand.Read(token); err != nil {
			lis.Close()
			return fmt.Errorf("create bearer token: %w", err)
		}
		s.tokens[a] = hex.EncodeToString(token)
	}
	s.keys = apikey.New(s.APIKeys)
	s.conns = newConnGuard(s.PreAuthBytes, s.PreAuthRate, s.keys.Empty())
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.tickets = newTickets(s.TicketTTL, s.MaxTicketBytes)
	s.prepared = newPreparedStore(s.PreparedTTL, s.MaxPrepared, s.MaxPreparedBytes)

	sql := &sqlService{s: s}
	sql.Alloc = s.Allocator
	if err := s.registerSqlInfo(sql); err != nil {
		lis.Close()
		return err
	}
	opts := append([]grpc.ServerOption{
		grpc.MaxRecvMsgSize(DefaultMaxRecvMsgBytes),
		// Credentials are checked from a call's headers, before its messages
		// are read (auth.go); the headers themselves are bounded.
		grpc.InTapHandle(s.tap),
		grpc.MaxHeaderListSize(DefaultMaxHeaderBytes),
		grpc.MaxConcurrentStreams(uint32(s.MaxStreams)),
		grpc.ConnectionTimeout(s.ConnectTimeout),
		grpc.ChainUnaryInterceptor(s.unaryInterceptor, s.authUnary),
		grpc.ChainStreamInterceptor(s.streamInterceptor, s.authStream),
		// Clients (the api, chained runtimes) ping idle connections every 10 s to
		// notice partitions; gRPC's default policy would answer that with GOAWAY.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: MinKeepaliveTime, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: s.IdleTimeout}),
		// Calls run on long-lived goroutines whose stacks have grown already:
		// a fresh goroutine per call spent about a tenth of a cached read's CPU
		// growing its stack. When all are busy a call gets its own goroutine.
		grpc.NumStreamWorkers(uint32(4 * runtime.GOMAXPROCS(0))),
	}, s.GRPCOptions...)
	gs := grpc.NewServer(opts...)
	flight.RegisterFlightServiceServer(gs, &service{
		FlightServer: flightsql.NewFlightServerWithAllocator(sql, s.Allocator),
		s:            s,
		sql:          sql,
	})
	hs := s.openHealth(s.ctx)
	healthpb.RegisterHealthServer(gs, healthServer{Server: hs.srv, done: s.ctx})

	s.mu.Lock()
	s.lis, s.grpc, s.health = lis, gs, hs
	s.mu.Unlock()
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		if err := gs.Serve(guardListener{Listener: lis, g: s.conns}); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			s.Logger.Error("flight server stopped", "addr", lis.Addr().String(), logging.ErrorKey, err)
		}
	}()
	go func() {
		defer s.wg.Done()
		s.sweep(s.ctx)
	}()
	return nil
}

func (s *Server) applyDefaults() {
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if s.Allocator == nil {
		s.Allocator = memory.DefaultAllocator
	}
	if s.TicketTTL <= 0 {
		s.TicketTTL = DefaultTicketTTL
	}
	if s.MaxTicketBytes <= 0 {
		s.MaxTicketBytes = DefaultMaxTicketBytes
	}
	if s.PreparedTTL <= 0 {
		s.PreparedTTL = DefaultPreparedTTL
	}
	if s.MaxPrepared <= 0 {
		s.MaxPrepared = DefaultMaxPrepared
	}
	if s.MaxPreparedBytes <= 0 {
		s.MaxPreparedBytes = DefaultMaxPreparedBytes
	}
	if s.HeartbeatInterval <= 0 {
		s.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if s.Throttle == nil {
		s.Throttle = &apikey.Throttle{Logger: s.Logger}
	}
	if s.PreAuthBytes <= 0 {
		s.PreAuthBytes = DefaultPreAuthBytes
	}
	if s.PreAuthRate <= 0 {
		s.PreAuthRate = DefaultPreAuthRate
	}
	if s.MaxStreams <= 0 {
		s.MaxStreams = DefaultMaxStreams
	}
	if s.IdleTimeout <= 0 {
		s.IdleTimeout = DefaultIdleTimeout
	}
	if s.ConnectTimeout <= 0 {
		s.ConnectTimeout = DefaultConnectTimeout
	}
	if s.ServerName == "" {
		s.ServerName = DefaultServerName
	}
	if s.Version == "" {
		s.Version = DefaultVersion
	}
}

// Close stops accepting calls, ends change streams (spice.watch) and waits for
// running calls until ctx ends, then cuts them off. Held results are released.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	gs := s.grpc
	s.grpc = nil
	s.mu.Unlock()
	if gs == nil {
		return nil
	}
	s.cancel()
	done := make(chan struct{})
	go func() { gs.GracefulStop(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		gs.Stop()
		<-done
		err = fmt.Errorf("close flight server: %w; open calls were cut off", ctx.Err())
	}
	s.wg.Wait()
	s.tickets.clear()
	return err
}

// Conns returns the open connections and how many of them have presented a
// valid key (all of them without API keys), and how many were closed for
// sending more than PreAuthBytes before that.
func (s *Server) Conns() (open, trusted int, cut uint64) {
	s.mu.Lock()
	g := s.conns
	s.mu.Unlock()
	if g == nil {
		return 0, 0, 0
	}
	open, trusted = g.count()
	return open, trusted, g.cut.Load()
}

// HeldBytes is what the server holds between calls: results waiting for their
// DoGet and prepared statements' texts. It stays within MaxTicketBytes plus
// MaxPreparedBytes.
func (s *Server) HeldBytes() int64 {
	s.mu.Lock()
	t, p := s.tickets, s.prepared
	s.mu.Unlock()
	if t == nil {
		return 0
	}
	return t.heldBytes() + p.heldBytes()
}

// sweep drops expired tickets and prepared statements until ctx ends.
func (s *Server) sweep(ctx context.Context) {
	t := time.NewTicker(min(s.TicketTTL/2, 5*time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			s.tickets.sweep(now)
			s.prepared.sweep(now)
		}
	}
}
