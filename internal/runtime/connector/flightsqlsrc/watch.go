package flightsqlsrc

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// Watch listens to the upstream's change notices (the spice.watch action of this
// runtime's Flight server) and calls changed after each, until ctx ends. It
// reconnects with back-off while the upstream is down, and calls changed on every
// reconnection too, as changes may have been missed. It returns an error at once
// when the upstream does not know the action (another vendor's server, or an
// older runtime): the engine then relies on refresh_check_interval.
func (s *Source) Watch(ctx context.Context, changed func()) error {
	wait := 100 * time.Millisecond
	for {
		notices, err := s.watchOnce(ctx, changed)
		if ctx.Err() != nil {
			return nil
		}
		switch status.Code(err) {
		case codes.Unimplemented, codes.InvalidArgument:
			return fmt.Errorf("watch %s at flightsql endpoint %s: the upstream cannot push changes: %w", s.table, s.cfg.Endpoint, err)
		case codes.Unauthenticated:
			s.forgetAuth() // a restarted upstream issues new tokens: handshake again
		}
		if notices > 0 {
			wait = 100 * time.Millisecond
		}
		s.Logger.Debug("change notices interrupted; reconnecting", logTable, s.table, logEndpoint, s.cfg.Endpoint.String(), "in", wait, logging.ErrorKey, err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(wait*2, s.MaxBackoff)
	}
}

// watchOnce streams notices until the stream breaks and returns how many came.
func (s *Source) watchOnce(ctx context.Context, changed func()) (int, error) {
	c, callCtx, err := s.call(ctx)
	if err != nil {
		return 0, err
	}
	body := wire.WatchRequest{Table: s.table}.Encode()
	stream, err := c.Client.DoAction(callCtx, &flight.Action{Type: wire.ActionWatch, Body: body})
	if err != nil {
		return 0, err
	}
	for n := 0; ; n++ {
		if _, err := stream.Recv(); err != nil {
			return n, err
		}
		changed()
	}
}
