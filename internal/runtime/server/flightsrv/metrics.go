package flightsrv

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// Metrics are the Flight server's Prometheus metrics, named as upstream's.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics creates the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "flight_requests",
			Help: "Flight calls by gRPC method and status code."}, []string{"method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "flight_request_duration_ms",
			Help:    "Duration of Flight calls, streams included, in milliseconds.",
			Buckets: []float64{.25, .5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 10000}}, []string{"method"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

func (m *Metrics) observe(method string, err error, d time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(method, status.Code(err).String()).Inc()
	m.duration.WithLabelValues(method).Observe(float64(d.Microseconds()) / 1000)
}

// methodName turns "/arrow.flight.protocol.FlightService/DoGet" into "DoGet".
func methodName(full string) string {
	return full[strings.LastIndexByte(full, '/')+1:]
}

// unaryInterceptor and streamInterceptor translate errors to status codes (once,
// in toStatus) and record metrics.
func (s *Server) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := handler(ctx, req)
	method := methodName(info.FullMethod)
	err = toStatus(s.Logger, method, err)
	s.Metrics.observe(method, err, time.Since(start))
	return resp, err
}

func (s *Server) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	start := time.Now()
	err := handler(srv, ss)
	method := methodName(info.FullMethod)
	err = toStatus(s.Logger, method, err)
	s.Metrics.observe(method, err, time.Since(start))
	return err
}
