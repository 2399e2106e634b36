package httpsrv

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/apikey"
)

// Defaults.
const (
	// DefaultMaxQueryBytes bounds the body of POST /v1/sql: the engine's limit
	// on a query text, which Flight shares.
	DefaultMaxQueryBytes = engine.DefaultMaxQueryBytes
	// DefaultRequestTimeout bounds one request.
	DefaultRequestTimeout = 60 * time.Second
	// DefaultReadTimeout bounds reading one request, body included: a client
	// that sends its body slowly is cut off instead of holding a connection.
	DefaultReadTimeout = 15 * time.Second
	// DefaultIdleTimeout bounds an idle keep-alive connection.
	DefaultIdleTimeout = 120 * time.Second
)

// Engine is what the API needs from the runtime's engine.
type Engine interface {
	Query(ctx context.Context, q engine.Query) (*engine.Result, error)
	Ready() bool
	RefreshWith(name string, o engine.RefreshOverrides) error
	Status(ctx context.Context) []engine.Status
}

// Endpoint is one of the runtime's listeners, for /v1/status: Name is
// upstream's ("http", "flight", "metrics"), Addr the bound address.
type Endpoint struct {
	Name, Addr string
}

// Server serves the HTTP API on its own listener.
type Server struct {
	// Endpoints are listed by /v1/status.
	Endpoints []Endpoint
	// Spicepods are listed by /v1/spicepods.
	Spicepods []Spicepod
	// Logger receives failed queries and a server that stops; nil means
	// slog.Default().
	Logger *slog.Logger
	// APIKeys, when not empty, are required on every request but /health and
	// /v1/ready (header X-API-Key); a refresh needs a read-write one (403
	// otherwise). See auth.go.
	APIKeys []apikey.Key
	// Throttle slows down addresses that send wrong keys (see
	// apikey.Throttle); share one with the Flight server. A private one when
	// nil.
	Throttle *apikey.Throttle
	// TLS, when set, makes the listener speak TLS only.
	TLS *tls.Config
	// MaxQueryBytes bounds the body of POST /v1/sql; DefaultMaxQueryBytes when
	// zero. Larger bodies answer 413.
	MaxQueryBytes int
	// ReadTimeout bounds reading a request, headers and body; DefaultReadTimeout
	// when zero.
	ReadTimeout time.Duration

	engine Engine
	addr   string
	ln     net.Listener
	srv    *http.Server
}

// New returns a server for e that will listen on addr.
func New(addr string, e Engine) *Server {
	return &Server{addr: addr, engine: e}
}

// Open binds the listener and starts serving.
func (s *Server) Open() error {
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("listen http on %s: %w", s.addr, err)
	}
	if s.TLS != nil {
		ln = tls.NewListener(ln, s.TLS)
	}
	s.ln = ln
	if s.ReadTimeout <= 0 {
		s.ReadTimeout = DefaultReadTimeout
	}
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: min(10*time.Second, s.ReadTimeout),
		ReadTimeout: s.ReadTimeout, IdleTimeout: DefaultIdleTimeout}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.Logger.Error("http server stopped", logging.ErrorKey, err)
		}
	}()
	return nil
}

// Addr is the bound address (useful with ":0"); empty before Open.
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Close stops accepting requests and waits for running ones until ctx ends.
func (s *Server) Close(ctx context.Context) error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Shutdown(ctx)
}

// Handler returns the routes.
func (s *Server) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.RequestID, middleware.Recoverer, middleware.Timeout(DefaultRequestTimeout))
	r.Use(s.authenticate)
	r.Get("/health", func(w http.ResponseWriter, _ *http.Request) { text(w, http.StatusOK, "ok") })
	r.Get("/v1/ready", s.ready)
	r.Post("/v1/sql", s.sql)
	r.Get("/v1/datasets", s.datasets)
	r.With(requireWrite).Post("/v1/datasets/{name}/acceleration/refresh", s.refresh)
	r.Get("/v1/status", s.status)
	r.Get("/v1/spicepods", s.spicepods)
	r.Get("/v1/catalogs", s.catalogs)
	return r
}

func (s *Server) ready(w http.ResponseWriter, _ *http.Request) {
	if s.engine.Ready() {
		text(w, http.StatusOK, "Ready")
		return
	}
	text(w, http.StatusServiceUnavailable, "Not Ready")
}

func text(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}
