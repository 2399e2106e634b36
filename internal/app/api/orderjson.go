package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/cqrs-spice/cqrs/internal/app/orders"
)

// orderKeys are the keys of an order body, spelled exactly so.
var orderKeys = []string{"product_id", "count"}

// parseOrder decodes an order body strictly: one JSON object holding exactly
// product_id and count, each once, spelled exactly (encoding/json alone would
// match keys case-insensitively and let a repeated key win), both integers.
// Range checks are the store's (orders.NewOrder.Validate).
func parseOrder(body []byte) (orders.NewOrder, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return orders.NewOrder{}, describeJSONError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		if tok == nil {
			return orders.NewOrder{}, missing(orderKeys)
		}
		return orders.NewOrder{}, requestErrorf(errBadRequest, "the body is a JSON %s; send one object like %s", jsonKind(tok), orderExample)
	}
	vals := map[string]int64{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return orders.NewOrder{}, describeJSONError(err)
		}
		key, _ := tok.(string) // inside an object the decoder yields only string keys
		if err := checkKey(key, vals); err != nil {
			return orders.NewOrder{}, err
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return orders.NewOrder{}, describeJSONError(err)
		}
		n, ok := v.(json.Number)
		i, err := n.Int64()
		if !ok || err != nil {
			return orders.NewOrder{}, requestErrorf(errBadRequest, "field %s must be an integer, not %s; send %s", key, jsonKind(v), orderExample)
		}
		vals[key] = i
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return orders.NewOrder{}, describeJSONError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return orders.NewOrder{}, requestErrorf(errBadRequest, "the body holds more than one JSON value; send one object like %s", orderExample)
	}
	var absent []string
	for _, k := range orderKeys {
		if _, ok := vals[k]; !ok {
			absent = append(absent, k)
		}
	}
	if len(absent) > 0 {
		return orders.NewOrder{}, missing(absent)
	}
	return orders.NewOrder{ProductID: vals["product_id"], Count: vals["count"]}, nil
}

// checkKey refuses a key that is unknown, differently cased or repeated.
func checkKey(key string, seen map[string]int64) error {
	known := false
	for _, k := range orderKeys {
		switch {
		case key == k:
			known = true
		case strings.EqualFold(key, k):
			return requestErrorf(errBadRequest, "key %q must be written %q: keys are case-sensitive; send %s", key, k, orderExample)
		}
	}
	if !known {
		return requestErrorf(errBadRequest, "unknown field %q; send only product_id and count, like %s", key, orderExample)
	}
	if _, dup := seen[key]; dup {
		return requestErrorf(errBadRequest, "key %q appears twice; send each of product_id and count once, like %s", key, orderExample)
	}
	return nil
}

func missing(keys []string) error {
	return requestErrorf(errBadRequest, "missing %s; send %s, or no body for a random order", strings.Join(keys, " and "), orderExample)
}

// jsonKind names a decoded JSON value for messages: "string", "number 2.5".
func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "bool"
	case json.Number:
		return "number " + v.String()
	case json.Delim:
		if v == '[' {
			return "array"
		}
		return "object"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "value"
}

func describeJSONError(err error) error {
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return requestErrorf(errBadRequest, "malformed JSON at byte %d (%v); send %s", syntax.Offset, syntax, orderExample)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return requestErrorf(errBadRequest, "malformed JSON: the body ends early; send %s", orderExample)
	default:
		return requestErrorf(errBadRequest, "%v; send %s", err, orderExample)
	}
}

// appendOrderJSON appends o as json.Marshal writes it, for the answer of every
// POST /orders. ok is false for a time json.Marshal refuses (a year outside
// 0..9999), which the caller then hands to json.Marshal.
func appendOrderJSON(b []byte, o orders.Order) (_ []byte, ok bool) {
	if y := o.CreatedAt.Year(); y < 0 || y > 9999 {
		return b, false
	}
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, o.ID, 10)
	b = append(b, `,"product_id":`...)
	b = strconv.AppendInt(b, o.ProductID, 10)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, o.Count, 10)
	b = append(b, `,"created_at":"`...)
	b = o.CreatedAt.AppendFormat(b, time.RFC3339Nano)
	return append(b, `"}`...), true
}
