package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// A subscription streams the rows of a dataset or view over Arrow Flight
// DoExchange: a snapshot at a position, then row-level changes, each tagged with
// the position it reflects.
//
// Request. The client opens DoExchange and sends one FlightData whose
// flight_descriptor is a CMD descriptor holding an encoded SubscribeRequest,
// {"subscribe": "<dataset or view>"} (with "since": "<position>" when its rows
// already reflect a position: the snapshot is then at or past it), then may
// close its side. A server without
// subscriptions answers Unimplemented (arrow-go's default for DoExchange); the
// client then falls back to spice.watch and full reads.
//
// Response. One Arrow IPC stream: the schema, then record batches of that schema,
// each with a SubscriptionMeta as app_metadata (JSON). Every message after the
// schema is a record batch, markers being batches of zero rows, so any Flight
// client's record reader can read the stream. In order:
//
//  1. one or more KindSnapshot batches, all carrying the snapshot's position,
//     the maintained query's mode ("incremental: ..." or "recompute: <why>")
//     and, when the query orders its result at the top level, that ordering
//     (Order: the columns, direction and NULL placement a reader of the
//     subscriber's table expects; the first batch holds no rows when the result
//     is empty);
//  2. a KindCommit marker at the same position: the snapshot is complete;
//  3. then, for each change, zero or more KindDelete batches (rows that left the
//     result; each removes one equal row, NULLs equal), then zero or more
//     KindInsert batches (rows that entered), all carrying the change's position;
//     the last of them says commit (Commit, "commit": true), or a KindCommit
//     marker at that position follows: apply the deletes and inserts together,
//     then the result is as of that position (a server sends the flag, saving a
//     message per change; a client takes both);
//  4. KindProgress markers in between: nothing changed, the rows hold as of the
//     marker's position;
//  5. KindHeartbeat markers when nothing else was sent for a while (the server
//     sends one every few seconds), so a client notices a dead peer by silence.
//
// Positions only grow. The stream ends with a gRPC status: ResourceExhausted when
// the subscriber fell too far behind, Unavailable when the server shuts down;
// either way the client subscribes again and receives a new snapshot.
const (
	KindSnapshot  = "snapshot"
	KindDelete    = "delete"
	KindInsert    = "insert"
	KindCommit    = "commit"
	KindProgress  = "progress"
	KindHeartbeat = "heartbeat"
)

// SubscribeRequest is the command of a subscription's DoExchange descriptor.
type SubscribeRequest struct {
	// Subscribe names the dataset or view, as the upstream's catalog does.
	Subscribe string
	// Since, when set, is the position the subscriber's rows already reflect:
	// the upstream answers with a snapshot at or past it (waiting, bounded,
	// until its own position gets there), so that a subscriber that subscribes
	// again, to a restarted upstream or to another replica of it, never goes
	// back in the source's history.
	Since position.LSN
}

// subscribeJSON is SubscribeRequest as JSON.
type subscribeJSON struct {
	Subscribe string `json:"subscribe"`
	Since     string `json:"since,omitempty"`
}

// Encode returns the descriptor's command: {"subscribe":"<name>"}, with
// "since":"<position>" when set.
func (r SubscribeRequest) Encode() []byte {
	j := subscribeJSON{Subscribe: r.Subscribe}
	if r.Since != 0 {
		j.Since = r.Since.String()
	}
	b, _ := json.Marshal(j) // strings cannot fail
	return b
}

// IsSubscribeRequest reports whether a command looks like a SubscribeRequest
// (a JSON object), as opposed to SQL text or a Flight SQL message.
func IsSubscribeRequest(cmd []byte) bool {
	return bytes.HasPrefix(bytes.TrimSpace(cmd), []byte("{"))
}

// DecodeSubscribeRequest reads a descriptor's command. The error quotes it and
// shows the expected form.
func DecodeSubscribeRequest(cmd []byte) (SubscribeRequest, error) {
	var j subscribeJSON
	dec := json.NewDecoder(bytes.NewReader(cmd))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil || strings.TrimSpace(j.Subscribe) == "" {
		return SubscribeRequest{}, fmt.Errorf(`subscription command %q: want JSON like {"subscribe": "rankings"} or {"subscribe": "rankings", "since": "0/16B3748"}`, truncate(cmd, 200))
	}
	r := SubscribeRequest{Subscribe: j.Subscribe}
	if j.Since != "" {
		pos, err := position.Parse(j.Since)
		if err != nil {
			return SubscribeRequest{}, fmt.Errorf(`subscription command %q: since: %w; want JSON like {"subscribe": "rankings"} or {"subscribe": "rankings", "since": "0/16B3748"}`, truncate(cmd, 200), err)
		}
		r.Since = pos
	}
	return r, nil
}

// SubscriptionMeta is the app_metadata of every message of a subscription
// stream after the schema, as JSON:
// {"kind":"commit","position":"0/16B3748"} (position omitted on heartbeats, mode
// only on snapshot batches, commit only on the last batch of a change).
type SubscriptionMeta struct {
	Kind     string
	Position position.LSN
	Mode     string
	// Commit ends a change on its last delete or insert batch, in place of a
	// KindCommit marker.
	Commit bool
	// Order is the subscribed query's top-level ORDER BY, on snapshot batches
	// only; empty when it has none or it is not on output columns.
	Order []OrderKey
}

// OrderKey is one key of a result's ordering: an output column, its
// direction and where its NULLs sort. JSON:
// {"column": "count", "descending": true, "nulls_first": true}.
type OrderKey struct {
	Column     string `json:"column"`
	Descending bool   `json:"descending,omitempty"`
	NullsFirst bool   `json:"nulls_first,omitempty"`
}

type subscriptionMetaJSON struct {
	Kind     string     `json:"kind"`
	Position string     `json:"position,omitempty"`
	Mode     string     `json:"mode,omitempty"`
	Commit   bool       `json:"commit,omitempty"`
	Order    []OrderKey `json:"order,omitempty"`
}

// Encode returns the app_metadata bytes.
func (m SubscriptionMeta) Encode() []byte {
	j := subscriptionMetaJSON{Kind: m.Kind, Mode: m.Mode, Commit: m.Commit, Order: m.Order}
	if m.Kind != KindHeartbeat {
		j.Position = m.Position.String()
	}
	b, _ := json.Marshal(j) // strings and booleans only: cannot fail
	return b
}

// DecodeSubscriptionMeta reads a message's app_metadata; an unknown kind or a
// missing position (but on heartbeats) is an error.
func DecodeSubscriptionMeta(b []byte) (SubscriptionMeta, error) {
	var j subscriptionMetaJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return SubscriptionMeta{}, fmt.Errorf(`decode subscription message metadata %q: want JSON like {"kind": "commit", "position": "0/16B3748"}: %w`, truncate(b, 200), err)
	}
	m := SubscriptionMeta{Kind: j.Kind, Mode: j.Mode, Commit: j.Commit, Order: j.Order}
	switch j.Kind {
	case KindHeartbeat:
		return m, nil
	case KindSnapshot, KindDelete, KindInsert, KindCommit, KindProgress:
	default:
		return SubscriptionMeta{}, fmt.Errorf("decode subscription message metadata: kind %q is not one of snapshot, delete, insert, commit, progress, heartbeat", j.Kind)
	}
	pos, err := position.Parse(j.Position)
	if err != nil {
		return SubscriptionMeta{}, fmt.Errorf("decode subscription %s message: %w", j.Kind, err)
	}
	m.Position = pos
	return m, nil
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
