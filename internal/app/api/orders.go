package api

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"time"

	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

const orderExample = `{"product_id": 1, "count": 3}`

// handleCreateOrder writes an order: the one in the body, or a random one when the
// body is empty (the recipe's behaviour). It answers 201 with the order and its
// read-your-writes token in Spice-Position.
func (s *Server) handleCreateOrder(w http.ResponseWriter, r *http.Request) {
	o, random, err := s.decodeOrder(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var order orders.Order
	var token position.LSN
	if random {
		order, token, err = s.orders.CreateRandom(r.Context())
	} else {
		order, token, err = s.orders.Create(r.Context(), o)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set(wire.HeaderPosition, token.String())
	writeOrder(w, http.StatusCreated, order)
}

// writeOrder answers order as JSON, as writeJSON would, without reflection.
func writeOrder(w http.ResponseWriter, status int, order orders.Order) {
	b, ok := appendOrderJSON(make([]byte, 0, 128), order)
	if !ok {
		writeJSON(w, status, order)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// decodeOrder reads the body within MaxBodyBytes and BodyTimeout. No body and no
// Content-Type asks for a random order (the recipe's curl -X POST); a body must
// be sent as application/json and is decoded by parseOrder.
func (s *Server) decodeOrder(w http.ResponseWriter, r *http.Request) (o orders.NewOrder, random bool, err error) {
	ct := r.Header.Get("Content-Type")
	isJSON := false
	if ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if isJSON = err == nil && mt == "application/json"; !isJSON {
			return o, false, requestErrorf(errMediaType, "Content-Type %q is not accepted; send the order as JSON with Content-Type: application/json, like %s, or send no body and no Content-Type for a random order", ct, orderExample)
		}
	}
	if r.Body == http.NoBody { // Content-Length: 0, as the recipe's curl -X POST sends
		return o, true, nil
	}
	// A deadline for the body: ReadHeaderTimeout ends with the headers, and a
	// client trickling a body would otherwise hold its connection.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.bodyTimeout()))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			return o, false, requestErrorf(errTooLarge, "the body exceeds %d bytes; send %s", MaxBodyBytes, orderExample)
		case errors.Is(err, os.ErrDeadlineExceeded):
			return o, false, requestErrorf(errSlowBody, "the body did not arrive within %s; send it at once", s.bodyTimeout())
		}
		return o, false, requestErrorf(errBadRequest, "read body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return o, true, nil
	}
	if !isJSON {
		return o, false, requestErrorf(errMediaType, "a body needs Content-Type: application/json; send it with that header, like %s, or send no body for a random order", orderExample)
	}
	o, err = parseOrder(body)
	return o, false, err
}
