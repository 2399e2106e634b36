package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/app/api"
	"github.com/cqrs-spice/cqrs/internal/app/orders"
	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// store is a hand-written fake OrderStore; nil functions fail the request.
type store struct {
	create       func(ctx context.Context, o orders.NewOrder) (orders.Order, position.LSN, error)
	createRandom func(ctx context.Context) (orders.Order, position.LSN, error)
}

func (s *store) Create(ctx context.Context, o orders.NewOrder) (orders.Order, position.LSN, error) {
	return s.create(ctx, o)
}

func (s *store) CreateRandom(ctx context.Context) (orders.Order, position.LSN, error) {
	return s.createRandom(ctx)
}

// reader is a hand-written fake RankingReader.
type reader func(ctx context.Context, req ranking.Request) (ranking.Result, error)

func (f reader) Ranking(ctx context.Context, req ranking.Request) (ranking.Result, error) {
	return f(ctx, req)
}

// fixture is a Server over fakes, with its log in a buffer.
type fixture struct {
	store                               *store
	postgres, accelerated, materialized reader
	server                              *api.Server
	log                                 *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func notCalled(ctx context.Context, req ranking.Request) (ranking.Result, error) {
	return ranking.Result{}, errors.New("reader not expected to be called")
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	f := &fixture{
		store: &store{
			create: func(ctx context.Context, o orders.NewOrder) (orders.Order, position.LSN, error) {
				return orders.Order{}, 0, errors.New("Create not expected")
			},
			createRandom: func(ctx context.Context) (orders.Order, position.LSN, error) {
				return orders.Order{}, 0, errors.New("CreateRandom not expected")
			},
		},
		postgres: notCalled, accelerated: notCalled, materialized: notCalled,
		log: &syncBuffer{},
	}
	// The server reads the fakes through these indirections, so a test can
	// replace them after the server is built.
	f.server = api.NewServer(f.store,
		reader(func(ctx context.Context, r ranking.Request) (ranking.Result, error) { return f.postgres(ctx, r) }),
		reader(func(ctx context.Context, r ranking.Request) (ranking.Result, error) { return f.accelerated(ctx, r) }),
		reader(func(ctx context.Context, r ranking.Request) (ranking.Result, error) { return f.materialized(ctx, r) }),
	)
	f.server.Logger = slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	f.server.AllowedHosts = []string{"example.com"} // httptest.NewRequest's host
	return f
}

// do serves one request and returns the recorded answer.
func (f *fixture) do(tb testing.TB, method, target, body string, header ...string) *httptest.ResponseRecorder {
	tb.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	f.server.Handler().ServeHTTP(w, req)
	return w
}

// errorOf decodes a JSON error answer.
func errorOf(tb testing.TB, w *httptest.ResponseRecorder) string {
	tb.Helper()
	if got, want := w.Header().Get("Content-Type"), "application/json"; got != want {
		tb.Fatalf("content type=%q, want %q (body %q)", got, want, w.Body)
	}
	var body struct {
		Error string `json:"error"`
	}
	dec := json.NewDecoder(w.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		tb.Fatalf("decode error body: %v", err)
	}
	return body.Error
}

var createdAt = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func TestCreateOrder_Random(t *testing.T) {
	f := newFixture(t)
	f.store.createRandom = func(ctx context.Context) (orders.Order, position.LSN, error) {
		return orders.Order{ID: 7, ProductID: 2, Count: 55, CreatedAt: createdAt}, 0x1_00000010, nil
	}
	for _, body := range []string{"", "  \n"} {
		w := f.do(t, "POST", "/orders", body)
		if got, want := w.Code, http.StatusCreated; got != want {
			t.Fatalf("status=%d, want %d: %s", got, want, w.Body)
		}
		if got, want := w.Header().Get(wire.HeaderPosition), "1/10"; got != want {
			t.Fatalf("Spice-Position=%q, want %q", got, want)
		}
		if got, want := w.Body.String(), `{"id":7,"product_id":2,"count":55,"created_at":"2025-01-02T03:04:05Z"}`+"\n"; got != want {
			t.Fatalf("body=%q, want %q", got, want)
		}
	}
}

func TestCreateOrder_Body(t *testing.T) {
	f := newFixture(t)
	var got orders.NewOrder
	f.store.create = func(ctx context.Context, o orders.NewOrder) (orders.Order, position.LSN, error) {
		got = o
		return orders.Order{ID: 1, ProductID: o.ProductID, Count: o.Count, CreatedAt: createdAt}, 0x20, nil
	}
	w := f.do(t, "POST", "/orders", `{"product_id": 3, "count": 10000}`, "Content-Type", "application/json")
	if w.Code != http.StatusCreated {
		t.Fatalf("status=%d, want 201: %s", w.Code, w.Body)
	}
	if want := (orders.NewOrder{ProductID: 3, Count: 10000}); got != want {
		t.Fatalf("order=%+v, want %+v", got, want)
	}
	if got, want := w.Header().Get(wire.HeaderPosition), "0/20"; got != want {
		t.Fatalf("Spice-Position=%q, want %q", got, want)
	}
}

func TestCreateOrder_Rejected(t *testing.T) {
	for _, tt := range []struct {
		name     string
		body     string
		status   int
		contains string
	}{
		{"malformed", `{"product_id": 1,`, 400, "malformed JSON: the body ends early"},
		{"syntax", `{"product_id" 1}`, 400, "malformed JSON at byte"},
		{"unknown field", `{"product_id": 1, "count": 2, "price": 3}`, 400, `unknown field "price"; send only product_id and count`},
		{"two values", `{"product_id": 1, "count": 2} {"product_id": 1, "count": 2}`, 400, "more than one JSON value"},
		{"trailing garbage", `{"product_id": 1, "count": 2} x`, 400, "more than one JSON value"},
		{"missing count", `{"product_id": 1}`, 400, "missing count"},
		{"missing both", `{}`, 400, "missing product_id and count"},
		{"null", `null`, 400, "missing product_id and count"},
		{"count a string", `{"product_id": 1, "count": "2"}`, 400, "field count must be an integer, not string"},
		{"count a fraction", `{"product_id": 1, "count": 2.5}`, 400, "field count must be an integer, not number 2.5"},
		{"array", `[1, 2]`, 400, "the body is a JSON array; send one object"},
		{"too large", `{"product_id": 1, "count": 2, "x": "` + strings.Repeat("a", api.MaxBodyBytes) + `"}`, 413, "the body exceeds 4096 bytes"},
		{"count zero", `{"product_id": 1, "count": 0}`, 422, "count 0 is out of range: send an integer from 1 to 10000"},
		{"count negative", `{"product_id": 1, "count": -3}`, 422, "count -3 is out of range"},
		{"count too large", `{"product_id": 1, "count": 10001}`, 422, "count 10001 is out of range"},
		{"product zero", `{"product_id": 0, "count": 1}`, 422, "product 0 does not exist"},
		{"unknown product", `{"product_id": 42, "count": 1}`, 422, "product 42 does not exist"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.store.create = func(ctx context.Context, o orders.NewOrder) (orders.Order, position.LSN, error) {
				if err := o.Validate(); err != nil {
					return orders.Order{}, 0, err
				}
				// What the store answers on a foreign key violation.
				return orders.Order{}, 0, &orders.Error{Kind: orders.ErrUnknownProduct, Msg: fmt.Sprintf("product %d does not exist: order a product listed in the products table", o.ProductID)}
			}
			w := f.do(t, "POST", "/orders", tt.body, "Content-Type", "application/json")
			if got := w.Code; got != tt.status {
				t.Fatalf("status=%d, want %d: %s", got, tt.status, w.Body)
			}
			if msg := errorOf(t, w); !strings.Contains(msg, tt.contains) {
				t.Fatalf("error=%q, want it to contain %q", msg, tt.contains)
			}
			if log := f.log.String(); log != "" {
				t.Fatalf("a 4xx was logged at info level: %s", log)
			}
		})
	}
}

func TestCreateOrder_StoreErrors(t *testing.T) {
	for _, tt := range []struct {
		name       string
		err        error
		status     int
		message    string
		retryAfter string
	}{
		{"no products", &orders.Error{Kind: orders.ErrNoProducts, Msg: "there are no products to order: apply init.sql"}, 409, "there are no products to order: apply init.sql", ""},
		{"pool busy", &orders.Error{Kind: orders.ErrUnavailable, Msg: "postgres at db:5432 is busy: no pooled connection came free within 5s"}, 503, "postgres at db:5432 is busy: no pooled connection came free within 5s", "1"},
		{"schema missing", &orders.Error{Kind: orders.ErrSchema, Msg: "the database lacks the recipe's tables: apply init.sql"}, 500, "the database lacks the recipe's tables: apply init.sql", ""},
		{"unexpected", errors.New("pq: secret driver detail"), 500, "internal error: see the api's log for request ", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.store.createRandom = func(ctx context.Context) (orders.Order, position.LSN, error) {
				return orders.Order{}, 0, tt.err
			}
			w := f.do(t, "POST", "/orders", "")
			if got := w.Code; got != tt.status {
				t.Fatalf("status=%d, want %d: %s", got, tt.status, w.Body)
			}
			if msg := errorOf(t, w); !strings.HasPrefix(msg, tt.message) {
				t.Fatalf("error=%q, want prefix %q", msg, tt.message)
			}
			if got := w.Header().Get("Retry-After"); got != tt.retryAfter {
				t.Fatalf("Retry-After=%q, want %q", got, tt.retryAfter)
			}
			logged := f.log.String()
			if got, want := logged != "", tt.status >= 500; got != want {
				t.Fatalf("logged=%v, want %v: %q", got, want, logged)
			}
			if tt.status >= 500 && !strings.Contains(logged, tt.err.Error()) {
				t.Fatalf("log=%q, want it to hold the error %q", logged, tt.err)
			}
		})
	}
}

func TestRanking_Text(t *testing.T) {
	f := newFixture(t)
	for path, set := range map[string]*reader{
		"/ranking":              &f.postgres,
		"/ranking-accelerated":  &f.accelerated,
		"/ranking-materialized": &f.materialized,
	} {
		*set = func(ctx context.Context, req ranking.Request) (ranking.Result, error) {
			return ranking.Result{
				Rows:        []ranking.Row{{Name: "nintendo", Count: 1234}, {Name: "the most beautiful flower", Count: 0}},
				Position:    0x2_0000_0001,
				CacheStatus: "HIT",
			}, nil
		}
		w := f.do(t, "GET", path, "", "Accept", "*/*")
		if got, want := w.Code, 200; got != want {
			t.Fatalf("%s: status=%d, want %d: %s", path, got, want, w.Body)
		}
		want := "==== Leading Products ====\n" +
			"      1234 sold: nintendo\n" +
			"         0 sold: the most beautiful flower\n"
		if got := w.Body.String(); got != want {
			t.Fatalf("%s: body=%q, want %q", path, got, want)
		}
		if got, want := w.Header().Get("Content-Type"), "text/plain; charset=utf-8"; got != want {
			t.Fatalf("%s: content type=%q, want %q", path, got, want)
		}
		if got, want := w.Header().Get(wire.HeaderPosition), "2/1"; got != want {
			t.Fatalf("%s: Spice-Position=%q, want %q", path, got, want)
		}
		if got, want := w.Header().Get(wire.HeaderCacheStatus), "HIT"; got != want {
			t.Fatalf("%s: Results-Cache-Status=%q, want %q", path, got, want)
		}
		*set = notCalled
	}
}

func TestRanking_JSON(t *testing.T) {
	f := newFixture(t)
	f.materialized = func(ctx context.Context, req ranking.Request) (ranking.Result, error) {
		return ranking.Result{Rows: []ranking.Row{{Name: "nintendo", Count: 30}, {Name: "a \"quoted\" name", Count: 2}}}, nil
	}
	w := f.do(t, "GET", "/ranking-materialized", "", "Accept", "text/html;q=0.9, application/json")
	if got, want := w.Body.String(), `[{"name":"nintendo","count":30},{"name":"a \"quoted\" name","count":2}]`+"\n"; got != want {
		t.Fatalf("body=%q, want %q", got, want)
	}
	if got, want := w.Header().Get("Content-Type"), "application/json"; got != want {
		t.Fatalf("content type=%q, want %q", got, want)
	}
	if got, want := w.Header().Get(wire.HeaderPosition), "0/0"; got != want {
		t.Fatalf("Spice-Position=%q, want %q (unknown)", got, want)
	}
	if got := w.Header().Get(wire.HeaderCacheStatus); got != "" {
		t.Fatalf("Results-Cache-Status=%q, want none", got)
	}

	f.materialized = func(ctx context.Context, req ranking.Request) (ranking.Result, error) { return ranking.Result{}, nil }
	w = f.do(t, "GET", "/ranking-materialized", "", "Accept", "application/json")
	if got, want := w.Body.String(), "[]\n"; got != want {
		t.Fatalf("empty body=%q, want %q", got, want)
	}
}

func TestRanking_MinPosition(t *testing.T) {
	for _, tt := range []struct {
		name   string
		target string
		header string
		want   ranking.Request
	}{
		{"none", "/ranking-accelerated", "", ranking.Request{}},
		{"header", "/ranking-accelerated", "1/A0", ranking.Request{MinPosition: 0x1_000000A0}},
		{"query", "/ranking-accelerated?min_position=0/FF", "", ranking.Request{MinPosition: 0xFF}},
		{"header wins", "/ranking-accelerated?min_position=0/FF", "0/1", ranking.Request{MinPosition: 1}},
		{"decimal", "/ranking-accelerated?min_position=256", "", ranking.Request{MinPosition: 256}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			var got ranking.Request
			f.accelerated = func(ctx context.Context, req ranking.Request) (ranking.Result, error) {
				got = req
				return ranking.Result{}, nil
			}
			var header []string
			if tt.header != "" {
				header = []string{wire.HeaderMinPosition, tt.header}
			}
			if w := f.do(t, "GET", tt.target, "", header...); w.Code != 200 {
				t.Fatalf("status=%d: %s", w.Code, w.Body)
			}
			if got != tt.want {
				t.Fatalf("request=%+v, want %+v", got, tt.want)
			}
		})
	}

	f := newFixture(t)
	w := f.do(t, "GET", "/ranking-accelerated", "", wire.HeaderMinPosition, "yesterday")
	if got, want := w.Code, 400; got != want {
		t.Fatalf("status=%d, want %d", got, want)
	}
	if msg, want := errorOf(t, w), `Spice-Min-Position "yesterday" is not a position`; !strings.Contains(msg, want) {
		t.Fatalf("error=%q, want it to contain %q", msg, want)
	}
}

func TestRanking_NoCache(t *testing.T) {
	f := newFixture(t)
	var got ranking.Request
	f.accelerated = func(ctx context.Context, req ranking.Request) (ranking.Result, error) {
		got = req
		return ranking.Result{}, nil
	}
	f.do(t, "GET", "/ranking-accelerated", "", wire.HeaderCacheControl, "No-Cache")
	if !got.NoCache {
		t.Fatal("Cache-Control: no-cache was not passed on")
	}
}

func TestRanking_Errors(t *testing.T) {
	for _, tt := range []struct {
		name    string
		err     error
		status  int
		message string
	}{
		{
			"runtime down",
			&ranking.SourceError{Source: "accelerated runtime", Addr: "accelerated:50051", Kind: ranking.ErrUnavailable, Detail: "connection refused"},
			503, "accelerated runtime at accelerated:50051 is unavailable: connection refused",
		},
		{
			"min position not reached",
			&ranking.SourceError{Source: "accelerated runtime", Addr: "accelerated:50051", Kind: ranking.ErrTimeout, Detail: "position 0/FF not reached after 10s"},
			504, "accelerated runtime at accelerated:50051 did not answer in time: position 0/FF not reached after 10s",
		},
		{
			"bad answer",
			&ranking.SourceError{Source: "accelerated runtime", Addr: "accelerated:50051", Kind: ranking.ErrBadAnswer, Detail: "want columns name and count"},
			502, "accelerated runtime at accelerated:50051 gave an unexpected answer: want columns name and count",
		},
		{
			"unexpected",
			errors.New("rpc error: code = Internal desc = raw driver message"),
			500, "internal error: see the api's log for request ",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.accelerated = func(ctx context.Context, req ranking.Request) (ranking.Result, error) {
				return ranking.Result{}, tt.err
			}
			w := f.do(t, "GET", "/ranking-accelerated", "")
			if got := w.Code; got != tt.status {
				t.Fatalf("status=%d, want %d: %s", got, tt.status, w.Body)
			}
			msg := errorOf(t, w)
			if !strings.HasPrefix(msg, tt.message) {
				t.Fatalf("error=%q, want prefix %q", msg, tt.message)
			}
			if strings.Contains(msg, "raw driver message") {
				t.Fatalf("error=%q leaks the driver's message", msg)
			}
			if got := w.Header().Get(wire.HeaderPosition); got != "" {
				t.Fatalf("Spice-Position=%q on an error", got)
			}
		})
	}
}

func TestHealthzAndNoop(t *testing.T) {
	f := newFixture(t)
	for _, path := range []string{"/healthz", "/noop"} {
		w := f.do(t, "GET", path, "")
		if w.Code != 200 || w.Body.String() != "ok\n" {
			t.Fatalf("%s: %d %q, want 200 \"ok\\n\"", path, w.Code, w.Body)
		}
		if w.Header().Get(wire.HeaderRequestID) == "" {
			t.Fatalf("%s: no X-Request-Id", path)
		}
		if w := f.do(t, "HEAD", path, ""); w.Code != 200 {
			t.Fatalf("HEAD %s: %d, want 200", path, w.Code)
		}
	}
}

func TestReadyz(t *testing.T) {
	f := newFixture(t)
	ok := func(context.Context) error { return nil }
	f.server.Checks = []api.Check{{Name: "postgres", Ping: ok}, {Name: "accelerated", Ping: ok}, {Name: "materialized", Ping: ok}}
	w := f.do(t, "GET", "/readyz", "")
	if got, want := w.Code, 200; got != want {
		t.Fatalf("status=%d, want %d: %s", got, want, w.Body)
	}
	if got, want := w.Body.String(), `{"status":"ready","dependencies":{"accelerated":{"status":"ok"},"materialized":{"status":"ok"},"postgres":{"status":"ok"}}}`+"\n"; got != want {
		t.Fatalf("body=%s, want %s", got, want)
	}

	f.server.Checks[1].Ping = func(context.Context) error {
		return &ranking.SourceError{Source: "accelerated runtime", Addr: "accelerated:50051", Kind: ranking.ErrUnavailable, Detail: "connection refused"}
	}
	f.server.Checks[2].Ping = func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	f.server.ReadyTimeout = 10 * time.Millisecond
	w = f.do(t, "GET", "/readyz", "")
	if got, want := w.Code, 503; got != want {
		t.Fatalf("status=%d, want %d: %s", got, want, w.Body)
	}
	want := `{"status":"unavailable","dependencies":{` +
		`"accelerated":{"status":"unavailable","error":"accelerated runtime at accelerated:50051 is unavailable: connection refused"},` +
		`"materialized":{"status":"unavailable","error":"context deadline exceeded"},` +
		`"postgres":{"status":"ok"}}}` + "\n"
	if got := w.Body.String(); got != want {
		t.Fatalf("body=%s, want %s", got, want)
	}
}

func TestPanicIsJSON500(t *testing.T) {
	f := newFixture(t)
	f.postgres = func(ctx context.Context, req ranking.Request) (ranking.Result, error) { panic("boom") }
	w := f.do(t, "GET", "/ranking", "")
	if got, want := w.Code, 500; got != want {
		t.Fatalf("status=%d, want %d", got, want)
	}
	if msg := errorOf(t, w); !strings.HasPrefix(msg, "internal error: see the api's log for request ") {
		t.Fatalf("error=%q", msg)
	}
	if log := f.log.String(); !strings.Contains(log, "panic: boom") || !strings.Contains(log, "level=ERROR") {
		t.Fatalf("log=%q, want the panic at error level", log)
	}
}

func TestRequestTimeout(t *testing.T) {
	f := newFixture(t)
	f.server.RequestTimeout = 10 * time.Millisecond
	f.postgres = func(ctx context.Context, req ranking.Request) (ranking.Result, error) {
		<-ctx.Done()
		return ranking.Result{}, &orders.Error{Kind: orders.ErrUnavailable, Msg: "read ranking: postgres did not answer in time", Err: ctx.Err()}
	}
	w := f.do(t, "GET", "/ranking", "")
	if got, want := w.Code, 503; got != want {
		t.Fatalf("status=%d, want %d", got, want)
	}
}

func TestNotFoundAndMethod(t *testing.T) {
	f := newFixture(t)
	if w := f.do(t, "GET", "/nope", ""); w.Code != 404 || !strings.Contains(errorOf(t, w), "no endpoint /nope") {
		t.Fatalf("GET /nope: %d %s", w.Code, w.Body)
	}
	if w := f.do(t, "GET", "/orders", ""); w.Code != 405 || !strings.Contains(errorOf(t, w), "/orders does not accept GET") {
		t.Fatalf("GET /orders: %d %s", w.Code, w.Body)
	}
}

func TestServer_OpenClose(t *testing.T) {
	f := newFixture(t)
	f.server.Addr = "127.0.0.1:0"
	if err := f.server.Open(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(f.server.URL() + "/noop")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, want := resp.StatusCode, 200; got != want {
		t.Fatalf("status=%d, want %d", got, want)
	}
	if err := f.server.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(f.server.URL() + "/noop"); err == nil {
		t.Fatal("server still answers after Close")
	}
}

func TestStatusOf(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want int
	}{
		{&orders.Error{Kind: orders.ErrInvalid}, 422},
		{&orders.Error{Kind: orders.ErrUnknownProduct}, 422},
		{&orders.Error{Kind: orders.ErrNoProducts}, 409},
		{&orders.Error{Kind: orders.ErrUnavailable}, 503},
		{&orders.Error{Kind: orders.ErrSchema}, 500},
		{&orders.Error{Msg: "unexpected"}, 500},
		{&ranking.SourceError{Kind: ranking.ErrUnavailable}, 503},
		{&ranking.SourceError{Kind: ranking.ErrTimeout}, 504},
		{&ranking.SourceError{Kind: ranking.ErrBadAnswer}, 502},
		{fmt.Errorf("read: %w", context.Canceled), 499},
		{fmt.Errorf("read: %w", context.DeadlineExceeded), 503},
		{errors.New("anything else"), 500},
	} {
		if got := api.StatusOf(tt.err); got != tt.want {
			t.Errorf("StatusOf(%v)=%d, want %d", tt.err, got, tt.want)
		}
	}
}

// TestRanking_RenderedAnswerFollowsTheRows: one handler serves many answers (it
// keeps the last one rendered); each answer's body is that of its own rows and
// its headers carry its own position, whether the rows changed or not.
func TestRanking_RenderedAnswerFollowsTheRows(t *testing.T) {
	f := newFixture(t)
	h := f.server.Handler()
	a := []ranking.Row{{Name: "nintendo", Count: 30}, {Name: "flower", Count: 10}}
	b := []ranking.Row{{Name: "flower", Count: 35}, {Name: "nintendo", Count: 30}}
	for i, step := range []struct {
		rows     []ranking.Row
		pos      position.LSN
		json     bool
		wantBody string
	}{
		{a, 1, false, "==== Leading Products ====\n        30 sold: nintendo\n        10 sold: flower\n"},
		{a, 2, true, `[{"name":"nintendo","count":30},{"name":"flower","count":10}]` + "\n"},
		{a, 3, false, "==== Leading Products ====\n        30 sold: nintendo\n        10 sold: flower\n"},
		{b, 4, false, "==== Leading Products ====\n        35 sold: flower\n        30 sold: nintendo\n"},
		{b, 5, true, `[{"name":"flower","count":35},{"name":"nintendo","count":30}]` + "\n"},
		{nil, 6, true, "[]\n"},
		{a[:1], 7, false, "==== Leading Products ====\n        30 sold: nintendo\n"},
		{a, 8, true, `[{"name":"nintendo","count":30},{"name":"flower","count":10}]` + "\n"},
	} {
		f.materialized = func(ctx context.Context, req ranking.Request) (ranking.Result, error) {
			return ranking.Result{Rows: step.rows, Position: step.pos, CacheStatus: "HIT"}, nil
		}
		req := httptest.NewRequest("GET", "/ranking-materialized", nil)
		if step.json {
			req.Header.Set("Accept", "application/json")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if got, want := w.Code, 200; got != want {
			t.Fatalf("step %d: status=%d, want %d: %s", i, got, want, w.Body)
		}
		if got := w.Body.String(); got != step.wantBody {
			t.Fatalf("step %d: body=%q, want %q", i, got, step.wantBody)
		}
		if got, want := w.Header().Get(wire.HeaderPosition), step.pos.String(); got != want {
			t.Fatalf("step %d: Spice-Position=%q, want %q", i, got, want)
		}
		wantType := "text/plain; charset=utf-8"
		if step.json {
			wantType = "application/json"
		}
		if got := w.Header().Get("Content-Type"); got != wantType {
			t.Fatalf("step %d: content type=%q, want %q", i, got, wantType)
		}
	}
	// The rows a reader returned may be changed by it afterwards (they are its
	// own): the kept rendering does not follow them.
	rows := []ranking.Row{{Name: "x", Count: 1}}
	f.materialized = func(ctx context.Context, req ranking.Request) (ranking.Result, error) {
		return ranking.Result{Rows: rows}, nil
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/ranking-materialized", nil))
	rows[0].Count = 2
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/ranking-materialized", nil))
	if got, want := w.Body.String(), "==== Leading Products ====\n         2 sold: x\n"; got != want {
		t.Fatalf("after the reader changed its rows: body=%q, want %q", got, want)
	}
}
