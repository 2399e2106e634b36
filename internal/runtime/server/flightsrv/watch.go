package flightsrv

import (
	"bytes"
	"encoding/json"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// ActionWatch is the Flight action that streams a notice whenever what a table
// reflects changes, so a chained runtime refreshes at once instead of polling.
//
// The body is empty (watch everything) or the JSON of a WatchRequest. The server
// sends a WatchNotice at once, then one after every change of the table's
// position (after every change when the position is unknown, zero), until the
// client cancels or the server closes. A server without the action answers
// Unimplemented (or, for Flight SQL servers built on arrow-go, InvalidArgument).
const ActionWatch = "spice.watch"

const watchDescription = `streams {"position": "<lsn>"} after every change of a table ({"table": "<name>"}) or of any table (empty body)`

// WatchRequest is the body of a spice.watch action.
type WatchRequest struct {
	// Table is a dataset or view; empty watches every table and reports the least
	// position.
	Table string `json:"table,omitempty"`
}

// WatchNotice is the body of each result of a spice.watch action.
type WatchNotice struct {
	// Position is the LSN the table (or all tables) now reflects, "0/0" when unknown.
	Position string `json:"position"`
}

func (s *Server) watch(body []byte, stream flight.FlightService_DoActionServer) error {
	var req WatchRequest
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			return invalidf("%s body %q: want JSON like {\"table\": \"rankings\"} or nothing", ActionWatch, body)
		}
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
			b, _ := json.Marshal(WatchNotice{Position: pos.String()})
			if err := stream.Send(&flight.Result{Body: b}); err != nil {
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
