// Package wire holds the names the runtime and the api must agree on, so that each
// is spelled once: HTTP header names, gRPC (Flight) metadata keys, the values they
// carry, the spice.watch action with its request and notice, and the
// subscription protocol's request and message metadata (subscribe.go).
//
// Both programs import it; it imports nothing of the module but package position.
// A server sets a name from here and a client reads the same constant:
//
//	w.Header().Set(wire.HeaderPosition, pos.String())          // runtime, api
//	v := md.Get(wire.MetadataPosition)                          // a Flight client
//	body := wire.WatchRequest{Table: "rankings"}.Encode()       // spice.watch
//
// Upstream Spice uses the same HTTP names (Results-Cache-Status, X-Cache,
// Cache-Control: no-cache); the position names, spice.watch and subscriptions
// are ours.
package wire
