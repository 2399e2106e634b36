package flightsrv

import (
	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

const watchDescription = `streams {"position": "<lsn>"} after every change of a table ({"table": "<name>"}) or of any table (empty body)`

// watch serves wire.ActionWatch: a notice at once, then one after every change of
// the table's position (every change while it is unknown), until the client
// cancels or the server closes.
func (s *Server) watch(body []byte, stream flight.FlightService_DoActionServer) error {
	req, err := wire.DecodeWatchRequest(body)
	if err != nil {
		return invalidf("%v", err)
	}
	ctx := stream.Context()
	var last position.LSN
	sent := false
	for {
		changed := s.engine.Changed() // before reading, so no change slips between
		pos, err := s.position(req.Table)
		if err != nil {
			return err
		}
		if !sent || pos != last || pos.IsZero() {
			notice := wire.WatchNotice{Position: pos}.Encode()
			if err := stream.Send(&flight.Result{Body: notice}); err != nil {
				return err
			}
			sent, last = true, pos
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.ctx.Done():
			return ErrShuttingDown
		}
	}
}
