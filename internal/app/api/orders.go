package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

const orderExample = `{"product_id": 1, "count": 3}`

// handleCreateOrder writes an order: the one in the body, or a random one when the
// body is empty (the recipe's behaviour). It answers 201 with the order and its
// read-your-writes token in Spice-Position.
func (s *Server) handleCreateOrder(w http.ResponseWriter, r *http.Request) {
	o, random, err := decodeOrder(w, r)
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
	writeJSON(w, http.StatusCreated, order)
}

// decodeOrder reads the body strictly: one JSON object with exactly the fields
// product_id and count, both integers, within MaxBodyBytes. An empty body asks for
// a random order. Range checks are the store's (orders.NewOrder.Validate).
func decodeOrder(w http.ResponseWriter, r *http.Request) (o orders.NewOrder, random bool, err error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return o, false, requestErrorf(errTooLarge, "the body exceeds %d bytes; send %s", MaxBodyBytes, orderExample)
		}
		return o, false, requestErrorf(errBadRequest, "read body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return o, true, nil
	}
	var req struct {
		ProductID *int64 `json:"product_id"`
		Count     *int64 `json:"count"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return o, false, describeJSONError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return o, false, requestErrorf(errBadRequest, "the body holds more than one JSON value; send one object like %s", orderExample)
	}
	var missing []string
	if req.ProductID == nil {
		missing = append(missing, "product_id")
	}
	if req.Count == nil {
		missing = append(missing, "count")
	}
	if len(missing) > 0 {
		return o, false, requestErrorf(errBadRequest, "missing %s; send %s, or no body for a random order", strings.Join(missing, " and "), orderExample)
	}
	return orders.NewOrder{ProductID: *req.ProductID, Count: *req.Count}, false, nil
}

func describeJSONError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return requestErrorf(errBadRequest, "malformed JSON at byte %d (%v); send %s", syntax.Offset, syntax, orderExample)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return requestErrorf(errBadRequest, "malformed JSON: the body ends early; send %s", orderExample)
	case errors.As(err, &typ) && typ.Field != "":
		return requestErrorf(errBadRequest, "field %s must be an integer, not %s; send %s", typ.Field, typ.Value, orderExample)
	case errors.As(err, &typ):
		return requestErrorf(errBadRequest, "the body is a JSON %s; send one object like %s", typ.Value, orderExample)
	case strings.Contains(err.Error(), "unknown field"):
		field := err.Error()[strings.Index(err.Error(), "unknown field")+len("unknown field "):]
		return requestErrorf(errBadRequest, "unknown field %s; send only product_id and count, like %s", field, orderExample)
	default:
		return requestErrorf(errBadRequest, "%v; send %s", err, orderExample)
	}
}
