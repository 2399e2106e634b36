package wire

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// ActionWatch is the Flight action that streams a notice whenever what a table
// reflects changes, so a chained runtime refreshes at once instead of polling.
//
// The body is empty (watch everything) or an encoded WatchRequest. The server
// sends a WatchNotice at once, then one after every change of the table's
// position (after every change when the position is unknown, zero), until the
// client cancels or the server closes. A server without the action answers
// Unimplemented (or, for Flight SQL servers built on arrow-go, InvalidArgument).
const ActionWatch = "spice.watch"

// WatchRequest is the body of a spice.watch action, as JSON.
type WatchRequest struct {
	// Table is a dataset or view; empty watches every table and reports the least
	// position.
	Table string `json:"table,omitempty"`
}

// Encode returns the action body: {"table": "<name>"}, or {} for every table.
func (r WatchRequest) Encode() []byte {
	b, _ := json.Marshal(r) // a struct of one string cannot fail
	return b
}

// DecodeWatchRequest reads an action body; an empty body is the zero request
// (every table). The error quotes the body and shows the expected form.
func DecodeWatchRequest(body []byte) (WatchRequest, error) {
	var r WatchRequest
	if len(bytes.TrimSpace(body)) == 0 {
		return r, nil
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return WatchRequest{}, fmt.Errorf(`%s body %q: want JSON like {"table": "rankings"} or nothing`, ActionWatch, body)
	}
	return r, nil
}

// WatchNotice is the body of each result of a spice.watch action:
// {"position": "<lsn>"}.
type WatchNotice struct {
	// Position is what the table (or all tables) now reflects; zero ("0/0") when
	// unknown.
	Position position.LSN
}

type watchNoticeJSON struct {
	Position string `json:"position"`
}

// Encode returns the result body.
func (n WatchNotice) Encode() []byte {
	b, _ := json.Marshal(watchNoticeJSON{Position: n.Position.String()})
	return b
}

// DecodeWatchNotice reads a result body.
func DecodeWatchNotice(body []byte) (WatchNotice, error) {
	var j watchNoticeJSON
	if err := json.Unmarshal(body, &j); err != nil {
		return WatchNotice{}, fmt.Errorf(`decode %s notice %q: want JSON like {"position": "0/16B3748"}: %w`, ActionWatch, body, err)
	}
	pos, err := position.Parse(j.Position)
	if err != nil {
		return WatchNotice{}, fmt.Errorf("decode %s notice: %w", ActionWatch, err)
	}
	return WatchNotice{Position: pos}, nil
}
