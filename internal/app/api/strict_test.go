package api_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// strictOrderCases are what POST /orders accepts from whom: content types,
// cross-site writes, duplicate keys and their neighbours. FuzzParseOrder starts
// from their bodies.
var strictOrderCases = []struct {
	name     string
	body     string
	header   []string
	status   int
	contains string // in the error; "" for 201
}{
	{"recipe: no body, no type", "", nil, 201, ""},
	{"json without body", "", []string{"Content-Type", "application/json"}, 201, ""},
	{"json body", `{"product_id":1,"count":2}`, []string{"Content-Type", "application/json"}, 201, ""},
	{"json with charset", `{"product_id":1,"count":2}`, []string{"Content-Type", "application/json; charset=utf-8"}, 201, ""},
	{"same-origin browser", `{"product_id":1,"count":2}`, []string{"Content-Type", "application/json", "Sec-Fetch-Site", "same-origin"}, 201, ""},
	{"text/plain json body", `{"product_id":1,"count":2}`, []string{"Content-Type", "text/plain"}, 415, `Content-Type "text/plain" is not accepted; send the order as JSON with Content-Type: application/json`},
	{"form", `product_id=1&count=2`, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "Content-Type: application/json"},
	{"multipart", "--x--", []string{"Content-Type", "multipart/form-data; boundary=x"}, 415, "Content-Type: application/json"},
	{"text/plain without body", "", []string{"Content-Type", "text/plain"}, 415, "no body and no Content-Type for a random order"},
	{"body without type", `{"product_id":1,"count":2}`, nil, 415, "a body needs Content-Type: application/json"},
	{"cross-site form", `{"product_id":1,"count":2}`, []string{"Content-Type", "text/plain", "Sec-Fetch-Site", "cross-site"}, 403, "cross-origin POST /orders refused"},
	{"cross-site empty", "", []string{"Sec-Fetch-Site", "cross-site"}, 403, "cross-origin POST /orders refused"},
	{"foreign origin", "", []string{"Origin", "http://evil.example"}, 403, "a page of another site may not write"},
	{"duplicate key", `{"product_id":1,"count":1,"count":7}`, []string{"Content-Type", "application/json"}, 400, `key "count" appears twice`},
	{"duplicate product", `{"product_id":1,"product_id":2,"count":1}`, []string{"Content-Type", "application/json"}, 400, `key "product_id" appears twice`},
	{"cased keys", `{"Product_ID":1,"COUNT":2}`, []string{"Content-Type", "application/json"}, 400, `key "Product_ID" must be written "product_id": keys are case-sensitive`},
	{"cased count", `{"product_id":1,"Count":2}`, []string{"Content-Type", "application/json"}, 400, `key "Count" must be written "count"`},
	{"null value", `{"product_id":null,"count":2}`, []string{"Content-Type", "application/json"}, 400, "field product_id must be an integer, not null"},
	{"object value", `{"product_id":{},"count":2}`, []string{"Content-Type", "application/json"}, 400, "field product_id must be an integer, not object"},
	{"huge number", `{"product_id":1,"count":99999999999999999999}`, []string{"Content-Type", "application/json"}, 400, "field count must be an integer, not number 99999999999999999999"},
	{"string body", `"order"`, []string{"Content-Type", "application/json"}, 400, "the body is a JSON string"},
}

func TestCreateOrder_Strict(t *testing.T) {
	for _, tt := range strictOrderCases {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			created := 0
			f.store.create = func(ctx context.Context, o orders.NewOrder) (orders.Order, position.LSN, error) {
				created++
				return orders.Order{ID: 1, ProductID: o.ProductID, Count: o.Count, CreatedAt: createdAt}, 1, nil
			}
			f.store.createRandom = func(ctx context.Context) (orders.Order, position.LSN, error) {
				created++
				return orders.Order{ID: 1, ProductID: 1, Count: 1, CreatedAt: createdAt}, 1, nil
			}
			w := f.do(t, "POST", "/orders", tt.body, tt.header...)
			if got := w.Code; got != tt.status {
				t.Fatalf("status=%d, want %d: %s", got, tt.status, w.Body)
			}
			if got, want := created, map[bool]int{true: 1, false: 0}[tt.status == 201]; got != want {
				t.Fatalf("orders created=%d, want %d", got, want)
			}
			if tt.contains == "" {
				return
			}
			if msg := errorOf(t, w); !strings.Contains(msg, tt.contains) {
				t.Fatalf("error=%q, want it to contain %q", msg, tt.contains)
			}
		})
	}
}

func TestCreateOrder_WriteKey(t *testing.T) {
	for _, tt := range []struct {
		name   string
		header []string
		status int
	}{
		{"no key", nil, 401},
		{"wrong key", []string{"X-API-Key", "guess"}, 401},
		{"key in another header", []string{"Authorization", "Bearer s3cret"}, 401},
		{"right key", []string{"X-API-Key", "s3cret"}, 201},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.server.WriteKey = "s3cret"
			f.store.createRandom = func(ctx context.Context) (orders.Order, position.LSN, error) {
				return orders.Order{ID: 1, ProductID: 1, Count: 1, CreatedAt: createdAt}, 1, nil
			}
			w := f.do(t, "POST", "/orders", "", tt.header...)
			if got := w.Code; got != tt.status {
				t.Fatalf("status=%d, want %d: %s", got, tt.status, w.Body)
			}
			if tt.status == 401 {
				if msg, want := errorOf(t, w), "needs the header X-API-Key holding the api's API_WRITE_KEY"; !strings.Contains(msg, want) {
					t.Fatalf("error=%q, want it to contain %q", msg, want)
				}
			}
		})
	}
	// Reads stay open.
	f := newFixture(t)
	f.server.WriteKey = "s3cret"
	if w := f.do(t, "GET", "/healthz", ""); w.Code != 200 {
		t.Fatalf("GET /healthz with a write key set: %d", w.Code)
	}
}

// TestCreateOrder_SlowBodyIsCutOff: clients that trickle a body must not hold
// their connections. Each client sends its headers and one byte
// of a 40-byte body, then nothing; the server must answer 408 and close.
func TestCreateOrder_SlowBodyIsCutOff(t *testing.T) {
	f := newFixture(t)
	f.server.Addr = "127.0.0.1:0"
	f.server.BodyTimeout = 100 * time.Millisecond
	if err := f.server.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.server.Close(context.Background()) })

	conns := make([]net.Conn, 5)
	for i := range conns {
		c, err := net.Dial("tcp", f.server.ListenAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_, err = c.Write([]byte("POST /orders HTTP/1.1\r\nHost: api\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"))
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	for i, c := range conns {
		// Not a timing assertion: a bound so that a server which holds the
		// connection fails the test instead of hanging it.
		c.SetReadDeadline(time.Now().Add(time.Minute))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("client %d: read answer: %v (the server held the connection)", i, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got, want := resp.StatusCode, http.StatusRequestTimeout; got != want {
			t.Fatalf("client %d: status=%d, want %d: %s", i, got, want, body)
		}
		if !resp.Close {
			t.Errorf("client %d: the answer keeps the connection open", i)
		}
		if _, err := br.ReadByte(); err == nil {
			t.Errorf("client %d: the connection carries more after the answer", i)
		}
	}
}
