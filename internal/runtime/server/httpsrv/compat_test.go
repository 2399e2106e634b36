//go:build duckdb_arrow

package httpsrv_test

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/server/httpsrv"
)

// The types below have the field names, types and JSON tags of upstream's
// `spice` CLI (spiceai/spiceai, bin/spice/pkg/api: service.go, dataset.go,
// spicepod.go, model.go, catalog.go). The CLI decodes each route's answer
// into a slice of one of them with encoding/json; so do these tests.

type upstreamService struct {
	Name     string `json:"name,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	Status   string `json:"status,omitempty"`
}

type upstreamDataset struct {
	From                string `json:"from,omitempty"`
	Name                string `json:"name,omitempty"`
	ReplicationEnabled  bool   `json:"replication_enabled,omitempty"`
	AccelerationEnabled bool   `json:"acceleration_enabled,omitempty"`
	Status              string `json:"status,omitempty"`
}

type upstreamModel struct {
	Name   string `json:"name,omitempty"`
	From   string `json:"from,omitempty"`
	Status string `json:"status,omitempty"`
}

type upstreamSpicepod struct {
	Version      string            `json:"version,omitempty"`
	Name         string            `json:"name,omitempty"`
	Datasets     []upstreamDataset `json:"datasets,omitempty"`
	Models       []upstreamModel   `json:"models,omitempty"`
	Dependencies []string          `json:"dependencies,omitempty"`
}

type upstreamCatalog struct {
	From string `json:"from,omitempty"`
	Name string `json:"name,omitempty"`
}

// decodeAs decodes a 200 answer into []T as the CLI does.
func decodeAs[T any](t *testing.T, h http.Handler, path string) []T {
	t.Helper()
	rec := do(h, "GET", path, "", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s = %d %q, want 200", path, rec.Code, rec.Body.String())
	}
	var out []T
	if err := json.NewDecoder(rec.Body).Decode(&out); err != nil {
		t.Fatalf("GET %s: the spice CLI cannot decode the answer: %v", path, err)
	}
	return out
}

func TestStatusDecodesAsUpstreamServices(t *testing.T) {
	srv := httpsrv.New("127.0.0.1:0", fakeEngine{})
	srv.Endpoints = []httpsrv.Endpoint{{Name: "http", Addr: "127.0.0.1:8090"}, {Name: "flight", Addr: "127.0.0.1:50051"}}
	h := srv.Handler()
	got := decodeAs[upstreamService](t, h, "/v1/status")
	want := []upstreamService{
		{Name: "http", Endpoint: "127.0.0.1:8090", Status: "Ready"},
		{Name: "flight", Endpoint: "127.0.0.1:50051", Status: "Ready"},
		{Name: "metrics", Endpoint: "N/A", Status: "Disabled"},
		{Name: "opentelemetry", Endpoint: "N/A", Status: "Disabled"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("/v1/status = %+v, want %+v", got, want)
	}
	rec := do(h, "GET", "/v1/status?format=csv", "", nil)
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil || rec.Code != 200 || len(rows) != 5 || strings.Join(rows[0], ",") != "name,endpoint,status" ||
		strings.Join(rows[3], ",") != "metrics,N/A,Disabled" {
		t.Fatalf("/v1/status?format=csv = %d %q (%v), want a header and 4 rows", rec.Code, rec.Body.String(), err)
	}
	if rec := do(h, "GET", "/v1/status?format=xml", "", nil); rec.Code != 400 || !strings.Contains(rec.Body.String(), "format=csv") {
		t.Fatalf("/v1/status?format=xml = %d %q, want 400 naming the formats", rec.Code, rec.Body.String())
	}
}

func TestDatasetsDecodeAsUpstreamDatasets(t *testing.T) {
	h := newHandler(t)
	got := decodeAs[upstreamDataset](t, h, "/v1/datasets?status=true")
	statuses := map[string]string{}
	for _, d := range got {
		statuses[d.Name] = d.Status
	}
	want := map[string]string{"orders": "Ready", "plain": "Ready", "products": "Ready", "rankings": "Ready"}
	if len(statuses) != len(want) {
		t.Fatalf("statuses = %v, want %v", statuses, want)
	}
	for name, st := range want {
		if statuses[name] != st {
			t.Errorf("%s status = %q, want %q", name, statuses[name], st)
		}
	}
	if bySource := decodeAs[upstreamDataset](t, h, "/v1/datasets?source=test"); len(bySource) != 3 {
		t.Errorf("?source=test lists %d entries, want the 3 datasets from test:", len(bySource))
	}
	if none := decodeAs[upstreamDataset](t, h, "/v1/datasets?source=postgres"); len(none) != 0 {
		t.Errorf("?source=postgres lists %+v, want nothing", none)
	}
	rec := do(h, "GET", "/v1/datasets?status=true&format=csv", "", nil)
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil || len(rows) != 5 || strings.Join(rows[0], ",") != "from,name,replication_enabled,acceleration_enabled,status" ||
		strings.Join(rows[1], ",") != "test:orders,orders,false,true,Ready" {
		t.Fatalf("/v1/datasets?format=csv = %q (%v), want a header and 4 rows", rec.Body.String(), err)
	}
}

func TestSpicepodsAndCatalogsDecodeAsUpstream(t *testing.T) {
	srv := httpsrv.New("127.0.0.1:0", fakeEngine{})
	srv.Spicepods = []httpsrv.Spicepod{{Version: "v1", Name: "sample",
		Datasets: []httpsrv.PodDataset{{From: "postgres:public.orders", Name: "orders"}}, Views: []httpsrv.PodView{{Name: "rankings"}}}}
	h := srv.Handler()
	pods := decodeAs[upstreamSpicepod](t, h, "/v1/spicepods")
	if len(pods) != 1 || pods[0].Name != "sample" || pods[0].Version != "v1" || len(pods[0].Datasets) != 1 || pods[0].Datasets[0].From != "postgres:public.orders" {
		t.Fatalf("/v1/spicepods = %+v, want the one pod with its dataset", pods)
	}
	rec := do(h, "GET", "/v1/spicepods?format=csv", "", nil)
	if got, want := rec.Body.String(), "name,version,datasets_count,models_count,dependencies_count\nsample,v1,1,0,0\n"; got != want {
		t.Fatalf("/v1/spicepods?format=csv = %q, want %q", got, want)
	}
	if catalogs := decodeAs[upstreamCatalog](t, h, "/v1/catalogs"); len(catalogs) != 0 {
		t.Fatalf("/v1/catalogs = %+v, want none", catalogs)
	}
}
