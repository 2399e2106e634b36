package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// Defaults of the Server's tunables.
const (
	DefaultAddr              = ":9999"
	DefaultRequestTimeout    = 15 * time.Second
	DefaultReadyTimeout      = 3 * time.Second
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	// DefaultBodyTimeout bounds reading a request's body once its headers are
	// in: 4 KiB arrive in well under a second on any working link.
	DefaultBodyTimeout = 10 * time.Second

	// MaxBodyBytes bounds the body of POST /orders.
	MaxBodyBytes = 4 << 10
)

// DefaultTrustedProxies are the peers whose X-Forwarded-For the request log
// believes: a proxy on the same host.
var DefaultTrustedProxies = []string{"127.0.0.0/8", "::1/128"}

// OrderStore writes orders; the token is the write's read-your-writes position.
type OrderStore interface {
	Create(ctx context.Context, o orders.NewOrder) (orders.Order, position.LSN, error)
	CreateRandom(ctx context.Context) (orders.Order, position.LSN, error)
}

// RankingReader answers the ranking from one source.
type RankingReader interface {
	Ranking(ctx context.Context, req ranking.Request) (ranking.Result, error)
}

// Check is one dependency probed by GET /readyz.
type Check struct {
	Name string                          // "postgres", "accelerated", "materialized"
	Ping func(ctx context.Context) error // nil error: the dependency answers
}

// Server serves the api over HTTP. Set the exported fields before Open.
type Server struct {
	// Addr is the address to listen on; DefaultAddr when empty. ":0" picks a port.
	Addr string
	// RequestTimeout bounds each request; DefaultRequestTimeout when zero.
	RequestTimeout time.Duration
	// ReadyTimeout bounds each check of GET /readyz; DefaultReadyTimeout when zero.
	ReadyTimeout time.Duration
	// TrustedProxies are the CIDR prefixes of proxies whose X-Forwarded-For names
	// the client in the request log; DefaultTrustedProxies when nil.
	TrustedProxies []string
	// BodyTimeout bounds reading the body of POST /orders after the headers;
	// a client slower than that gets 408 and its connection is closed.
	// DefaultBodyTimeout when zero.
	BodyTimeout time.Duration
	// WriteKey, when set, is required in the X-API-Key header of POST /orders
	// (401 without it). Empty: anyone who reaches the api may write.
	WriteKey string
	// Checks are probed by GET /readyz, concurrently.
	Checks []Check
	// Live, when set, serves the live page under /live, without the request
	// timeout (its event stream lasts while the page is open); GET / then sends
	// browsers there. Nil: no page, and / answers with the list of endpoints.
	Live http.Handler
	// ConnContext, when set, is the HTTP server's ConnContext hook (the live
	// page's, which bounds its event streams' send buffers).
	ConnContext func(ctx context.Context, c net.Conn) context.Context
	// AllowedHosts are the host names a browser may reach the api by, besides
	// IP addresses and localhost (see guard.go); empty: none.
	AllowedHosts []string
	// Logger receives the request log; nil means slog.Default().
	Logger *slog.Logger

	orders                              OrderStore
	postgres, accelerated, materialized RankingReader

	ln     net.Listener
	srv    *http.Server
	wg     sync.WaitGroup
	depLog lineLimiter // the log lines of 502, 503 and 504
}

// NewServer returns a Server for the store that takes orders and the three readers
// of the ranking endpoints.
func NewServer(store OrderStore, postgres, accelerated, materialized RankingReader) *Server {
	return &Server{orders: store, postgres: postgres, accelerated: accelerated, materialized: materialized}
}

// Open binds the listener and starts serving in the background.
func (s *Server) Open() error {
	if s.orders == nil || s.postgres == nil || s.accelerated == nil || s.materialized == nil {
		return errors.New("open api server: the order store and the three ranking readers are required")
	}
	if s.Addr == "" {
		s.Addr = DefaultAddr
	}
	h, err := s.handler()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.Addr)
	if err != nil {
		return fmt.Errorf("open api server: listen on %s: %w", s.Addr, err)
	}
	s.ln = ln
	s.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: DefaultReadHeaderTimeout,
		// A backstop for every endpoint; POST /orders sets its own deadline.
		ReadTimeout:  DefaultReadHeaderTimeout + s.bodyTimeout(),
		WriteTimeout: s.requestTimeout() + 5*time.Second,
		IdleTimeout:  DefaultIdleTimeout,
		ErrorLog:     slog.NewLogLogger(s.logger().Handler(), slog.LevelWarn),
		ConnContext:  s.ConnContext,
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger().Error("api server stopped", logging.ErrorKey, err)
		}
	}()
	return nil
}

// Close stops accepting connections and waits for requests in flight until ctx
// ends, then closes the remaining connections.
func (s *Server) Close(ctx context.Context) error {
	if s.srv == nil {
		return nil
	}
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(fmt.Errorf("shut down api server: %w", err), s.srv.Close())
	}
	s.wg.Wait()
	return err
}

// ListenAddr returns the address the server listens on, once open; nil before.
func (s *Server) ListenAddr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Port returns the port the server listens on, once open; 0 before.
func (s *Server) Port() int {
	if s.ln == nil {
		return 0
	}
	return s.ln.Addr().(*net.TCPAddr).Port
}

// URL returns the server's base URL on the loopback interface, once open; empty
// before.
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port()))
}

// Handler returns the server's router, for tests that serve it themselves.
func (s *Server) Handler() http.Handler {
	h, err := s.handler()
	if err != nil {
		panic(err)
	}
	return h
}

func (s *Server) handler() (h http.Handler, err error) {
	proxies := s.TrustedProxies
	if proxies == nil {
		proxies = DefaultTrustedProxies
	}
	clientIP, err := clientIPMiddleware(proxies)
	if err != nil {
		return nil, err
	}
	r := chi.NewRouter()
	r.Use(middleware.RequestID, s.logRequests(clientIP), s.recoverPanics, s.browserHost, s.crossOrigin(), middleware.GetHead)
	if s.Live != nil {
		r.Handle("/live", s.Live)
		r.Handle("/live/*", s.Live)
	}
	r.Group(func(r chi.Router) {
		r.Use(s.timeout)
		s.routes(r)
	})
	return r, nil
}

// routes are the endpoints bounded by the request timeout.
func (s *Server) routes(r chi.Router) {
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, requestErrorf(errNotFound, "no endpoint %s; see GET /healthz, /ranking, /ranking-accelerated, /ranking-materialized, POST /orders", r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, requestErrorf(errMethodNotAllowed, "%s does not accept %s", r.URL.Path, r.Method))
	})
	r.With(s.requireWriteKey).Post("/orders", s.handleCreateOrder)
	r.Get("/ranking", s.handleRanking(s.postgres))
	r.Get("/ranking-accelerated", s.handleRanking(s.accelerated))
	r.Get("/ranking-materialized", s.handleRanking(s.materialized))
	r.Get("/healthz", handleOK)
	r.Get("/noop", handleOK)
	r.Get("/readyz", s.handleReady)
	r.Get("/", s.handleRoot)
}

func (s *Server) bodyTimeout() time.Duration {
	if s.BodyTimeout <= 0 {
		return DefaultBodyTimeout
	}
	return s.BodyTimeout
}

func (s *Server) requestTimeout() time.Duration {
	if s.RequestTimeout <= 0 {
		return DefaultRequestTimeout
	}
	return s.RequestTimeout
}

func (s *Server) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}
