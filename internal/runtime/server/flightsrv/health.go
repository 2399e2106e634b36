package flightsrv

import (
	"context"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// healthPoll is how often the health service re-reads Ready besides the engine's
// change notices (readiness may depend on state outside the engine).
const healthPoll = time.Second

// health serves grpc.health.v1 on the Flight port, for the api's balancer and for
// orchestrators' gRPC probes. The overall status ("" service) and the
// Flight service's status are SERVING only while Ready holds and the server is
// not draining; Drain makes them NOT_SERVING for good.
type healthService struct {
	srv   *health.Server
	ready func() bool
}

// healthServer ends Watch streams when the server closes: a Watch otherwise
// lasts as long as its client, and GracefulStop would wait for it.
type healthServer struct {
	*health.Server
	done context.Context
}

func (h healthServer) Watch(req *healthpb.HealthCheckRequest, ss healthpb.Health_WatchServer) error {
	ctx, cancel := context.WithCancel(ss.Context())
	defer cancel()
	stop := context.AfterFunc(h.done, cancel)
	defer stop()
	return h.Server.Watch(req, watchStream{Health_WatchServer: ss, ctx: ctx})
}

type watchStream struct {
	healthpb.Health_WatchServer
	ctx context.Context
}

func (w watchStream) Context() context.Context { return w.ctx }

func (s *Server) openHealth(ctx context.Context) *healthService {
	h := &healthService{srv: health.NewServer(), ready: s.Ready}
	if h.ready == nil {
		h.ready = func() bool { return true }
	}
	h.set(h.ready())
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		h.watch(ctx, s.engine.Changed)
	}()
	return h
}

func (h *healthService) set(ready bool) {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if ready {
		st = healthpb.HealthCheckResponse_SERVING
	}
	for _, name := range []string{"", healthFlightService} {
		h.srv.SetServingStatus(name, st) // a no-op once Shutdown ran
	}
}

// watch follows readiness until ctx ends.
func (h *healthService) watch(ctx context.Context, changed func() <-chan struct{}) {
	t := time.NewTicker(healthPoll)
	defer t.Stop()
	for {
		c := changed()
		h.set(h.ready())
		select {
		case <-ctx.Done():
			return
		case <-c:
		case <-t.C:
		}
	}
}

// healthFlightService is the service name a client may ask about besides "".
const healthFlightService = "arrow.flight.protocol.FlightService"

// Drain reports NOT_SERVING from now on, so that balancers stop sending new
// calls, while calls in flight go on; Close then waits for them. Call it on
// SIGTERM, wait a drain period, then Close. Draining a closed or unopened server
// does nothing.
func (s *Server) Drain() {
	s.mu.Lock()
	h := s.health
	s.mu.Unlock()
	if h != nil {
		h.srv.Shutdown()
	}
}
