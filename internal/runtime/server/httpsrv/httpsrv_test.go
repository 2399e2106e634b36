//go:build duckdb_arrow

package httpsrv_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/runtimetest"
	"github.com/cqrs-spice/cqrs/internal/runtime/server/httpsrv"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

var _ httpsrv.Engine = (*engine.Engine)(nil)

// pod serves the recipe plus plain, a dataset without acceleration.
const pod = `version: v1
kind: Spicepod
name: api
datasets:
  - from: test:products
    name: products
    acceleration: {enabled: true}
  - from: test:orders
    name: orders
    acceleration: {enabled: true}
  - from: test:plain
    name: plain
views:
  - name: rankings
    sql: with a as (SELECT products.id, sum(count) as count FROM orders INNER JOIN products ON orders.product_id = products.id GROUP BY products.id) select name, count from products left join a on products.id = a.id order by count desc nulls last, name limit 5
`

// newHandler returns the API of a loaded engine at position 0/64 (100) whose
// minimum-position waits give up after 100ms, and the sources behind it.
func newHandler(t *testing.T) http.Handler {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	products, orders := runtimetest.RecipeSources(t, mem, 100)
	plain := runtimetest.NewSource(t, mem, runtimetest.ProductsSchema)
	plain.Set(t, 0, []any{7, "plain"})
	e := runtimetest.NewEngine(t, pod, map[string]engine.Source{"products": products, "orders": orders, "plain": plain},
		func(e *engine.Engine) { e.MinPositionTimeout = 100 * time.Millisecond })
	runtimetest.WaitReady(t, e)
	return httpsrv.New("127.0.0.1:0", e).Handler()
}

// do sends one request to h.
func do(h http.Handler, method, path, body string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestHandlers(t *testing.T) {
	h := newHandler(t)
	const rankings = "SELECT name, count FROM rankings"
	for _, tc := range []struct {
		name       string
		method     string
		path       string
		body       string
		header     map[string]string
		wantCode   int
		wantBody   []string          // substrings of the body
		wantHeader map[string]string // exact values
	}{
		{name: "health", method: "GET", path: "/health", wantCode: 200, wantBody: []string{"ok"}},
		{name: "ready", method: "GET", path: "/v1/ready", wantCode: 200, wantBody: []string{"Ready"}},
		{
			name: "sql as json by default", method: "POST", path: "/v1/sql", body: rankings, wantCode: 200,
			wantBody:   []string{`[{"name":"nintendo","count":30},{"name":"the most delicious chocalate","count":20},{"name":"the most beautiful flower","count":10}]`},
			wantHeader: map[string]string{"Content-Type": "application/json", wire.HeaderPosition: "0/64", "Results-Cache-Status": "BYPASS"},
		},
		{
			name: "sql as json", method: "POST", path: "/v1/sql", body: rankings, header: map[string]string{"Accept": "application/json"}, wantCode: 200,
			wantBody: []string{`{"name":"nintendo","count":30}`}, wantHeader: map[string]string{"Content-Type": "application/json"},
		},
		{
			name: "sql as csv", method: "POST", path: "/v1/sql", body: rankings, header: map[string]string{"Accept": "text/csv"}, wantCode: 200,
			wantBody:   []string{"name,count\nnintendo,30\nthe most delicious chocalate,20\nthe most beautiful flower,10\n"},
			wantHeader: map[string]string{"Content-Type": "text/csv; charset=utf-8"},
		},
		{
			name: "sql as text", method: "POST", path: "/v1/sql", body: rankings, header: map[string]string{"Accept": "text/plain"}, wantCode: 200,
			wantBody:   []string{"name", "count", "nintendo", "30"},
			wantHeader: map[string]string{"Content-Type": "text/plain; charset=utf-8"},
		},
		{
			name: "sql with an unknown Accept answers json", method: "POST", path: "/v1/sql", body: rankings, header: map[string]string{"Accept": "image/png"}, wantCode: 200,
			wantHeader: map[string]string{"Content-Type": "application/json"},
		},
		{name: "sql with bad syntax", method: "POST", path: "/v1/sql", body: "SELEC name FROM products", wantCode: 400, wantBody: []string{"syntax error"}},
		{name: "sql on an unknown table", method: "POST", path: "/v1/sql", body: "SELECT * FROM nope", wantCode: 400, wantBody: []string{"nope"}},
		{name: "sql that writes", method: "POST", path: "/v1/sql", body: "INSERT INTO products VALUES (9, 'x')", wantCode: 400, wantBody: []string{"read"}},
		{name: "sql empty", method: "POST", path: "/v1/sql", body: " \n", wantCode: 400, wantBody: []string{"empty query"}},
		{name: "sql too large", method: "POST", path: "/v1/sql", body: "SELECT 1" + strings.Repeat(" ", httpsrv.DefaultMaxQueryBytes), wantCode: 413},
		{
			name: "sql with a reached min position", method: "POST", path: "/v1/sql", body: rankings,
			header: map[string]string{wire.HeaderMinPosition: "0/64"}, wantCode: 200,
			wantHeader: map[string]string{wire.HeaderPosition: "0/64"},
		},
		{
			name: "sql with a min position not reached", method: "POST", path: "/v1/sql", body: rankings,
			header: map[string]string{wire.HeaderMinPosition: "1/0"}, wantCode: 504, wantBody: []string{"1/0", "0/64"},
		},
		{
			name: "sql with a malformed min position", method: "POST", path: "/v1/sql", body: rankings,
			header: map[string]string{wire.HeaderMinPosition: "yesterday"}, wantCode: 400, wantBody: []string{wire.HeaderMinPosition},
		},
		{name: "refresh", method: "POST", path: "/v1/datasets/products/acceleration/refresh", wantCode: 201, wantBody: []string{"products"}},
		{name: "refresh of a view", method: "POST", path: "/v1/datasets/rankings/acceleration/refresh", wantCode: 400, wantBody: []string{"acceleration"}},
		{name: "refresh unknown", method: "POST", path: "/v1/datasets/nope/acceleration/refresh", wantCode: 404, wantBody: []string{"nope"}},
		{name: "refresh not accelerated", method: "POST", path: "/v1/datasets/plain/acceleration/refresh", wantCode: 400, wantBody: []string{"plain", "acceleration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(h, tc.method, tc.path, tc.body, tc.header)
			if rec.Code != tc.wantCode {
				t.Fatalf("%s %s = %d %q, want %d", tc.method, tc.path, rec.Code, rec.Body.String(), tc.wantCode)
			}
			for _, want := range tc.wantBody {
				if !strings.Contains(rec.Body.String(), want) {
					t.Errorf("body %q does not contain %q", rec.Body.String(), want)
				}
			}
			for k, want := range tc.wantHeader {
				if got := rec.Header().Get(k); got != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

func TestDatasets(t *testing.T) {
	h := newHandler(t)
	type entry struct {
		Name                string         `json:"name"`
		Kind                string         `json:"kind"`
		AccelerationEnabled bool           `json:"acceleration_enabled"`
		Detail              *engine.Status `json:"detail"`
	}
	for _, tc := range []struct {
		path       string
		wantStatus bool
	}{
		{path: "/v1/datasets", wantStatus: false},
		{path: "/v1/datasets?status=true", wantStatus: true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			rec := do(h, "GET", tc.path, "", nil)
			if rec.Code != 200 {
				t.Fatalf("GET %s = %d %q", tc.path, rec.Code, rec.Body.String())
			}
			var got []entry
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatalf("decode %q: %v", rec.Body.String(), err)
			}
			var names []string
			for _, d := range got {
				names = append(names, d.Kind+":"+d.Name)
				if (d.Detail != nil) != tc.wantStatus {
					t.Fatalf("%s has detail %v, want %v", d.Name, d.Detail != nil, tc.wantStatus)
				}
				if d.Detail == nil {
					continue
				}
				if !d.Detail.Ready || d.Detail.State != engine.StateReady {
					t.Errorf("%s detail = ready %v, state %s; want ready", d.Name, d.Detail.Ready, d.Detail.State)
				}
				if d.Name == "products" && (d.Detail.Rows != 3 || d.Detail.WatermarkS != "0/64" || !d.AccelerationEnabled) {
					t.Errorf("products detail = %+v, want 3 rows at 0/64, accelerated", d.Detail)
				}
			}
			if want := "dataset:orders dataset:plain dataset:products view:rankings"; strings.Join(names, " ") != want {
				t.Fatalf("datasets = %q, want %q", names, want)
			}
		})
	}
}

// TestBeforeLoad holds the first load of products: the runtime is alive but not
// ready, and a query of products answers 503 with Retry-After.
func TestBeforeLoad(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	products, orders := runtimetest.RecipeSources(t, mem, 100)
	release := products.BlockNext(t, 1)
	e := runtimetest.NewEngine(t, runtimetest.RecipePod, map[string]engine.Source{"products": products, "orders": orders}, nil)
	runtimetest.WaitFor(t, e, "the first load to start", func() bool { return products.Blocked() == 1 })
	runtimetest.WaitWatermark(t, e, "orders", 100)
	h := httpsrv.New("127.0.0.1:0", e).Handler()

	if rec := do(h, "GET", "/health", "", nil); rec.Code != 200 {
		t.Fatalf("/health before load = %d, want 200", rec.Code)
	}
	if rec := do(h, "GET", "/v1/ready", "", nil); rec.Code != 503 || !strings.Contains(rec.Body.String(), "Not Ready") {
		t.Fatalf("/v1/ready before load = %d %q, want 503 Not Ready", rec.Code, rec.Body.String())
	}
	rec := do(h, "POST", "/v1/sql", "SELECT * FROM products", nil)
	if rec.Code != 503 || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "products") {
		t.Fatalf("/v1/sql before load = %d %q (Retry-After %q), want 503 naming products with Retry-After",
			rec.Code, rec.Body.String(), rec.Header().Get("Retry-After"))
	}
	if rec := do(h, "POST", "/v1/sql", "SELECT * FROM orders", nil); rec.Code != 200 {
		t.Fatalf("/v1/sql of loaded orders while products loads = %d %q, want 200", rec.Code, rec.Body.String())
	}

	release()
	runtimetest.WaitReady(t, e)
	if rec := do(h, "GET", "/v1/ready", "", nil); rec.Code != 200 {
		t.Fatalf("/v1/ready after load = %d, want 200", rec.Code)
	}
	if rec := do(h, "POST", "/v1/sql", "SELECT * FROM products", nil); rec.Code != 200 {
		t.Fatalf("/v1/sql after load = %d %q, want 200", rec.Code, rec.Body.String())
	}
}
