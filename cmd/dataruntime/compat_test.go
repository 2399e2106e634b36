//go:build duckdb_arrow

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// upstreamService is the spice CLI's api.Service (spiceai/spiceai,
// bin/spice/pkg/api/service.go): what `spice status` decodes /v1/status into.
type upstreamService struct {
	Name     string `json:"name,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	Status   string `json:"status,omitempty"`
}

// TestSpiceToolsAgainstTheRuntime drives the runtime's real wiring as the
// spice CLI and gospice do: /v1/status names the bound ports, the metrics
// port answers upstream's health probe and exports datasets_status, and a
// refresh with gospice's overrides applies them to that one refresh of a
// Postgres dataset.
func TestSpiceToolsAgainstTheRuntime(t *testing.T) {
	_, params := MustDatabase(t, pg.Get(t), recipeSchema)
	dir := t.TempDir()
	path := filepath.Join(dir, "spicepod.yaml")
	if err := os.WriteFile(path, []byte(recipePod(params, "1h")), 0o644); err != nil {
		t.Fatal(err)
	}
	m := NewMain(Config{Spicepod: path, HTTPAddr: "127.0.0.1:0", FlightAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0", DataDir: dir,
		MinPositionTimeout: 2 * time.Second}, slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})))
	t.Cleanup(func() { m.Close() })
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	rt := &runtime{Main: m, url: "http://" + m.HTTP.Addr()}
	rt.waitReady(t)

	_, body := rt.get(t, "/v1/status")
	var services []upstreamService
	if err := json.Unmarshal([]byte(body), &services); err != nil {
		t.Fatalf("spice status cannot decode /v1/status %s: %v", body, err)
	}
	endpoints := map[string]upstreamService{}
	for _, s := range services {
		endpoints[s.Name] = s
	}
	if endpoints["http"].Endpoint != m.HTTP.Addr() || endpoints["flight"].Endpoint != m.Flight.Addr() || endpoints["metrics"].Status != "Ready" {
		t.Fatalf("/v1/status = %+v, want the bound http and flight ports and metrics Ready", services)
	}
	metrics := "http://" + endpoints["metrics"].Endpoint
	if code, got := httpGet(t, metrics+"/health"); code != 200 || got != "OK" {
		t.Fatalf("metrics GET /health = %d %q, want upstream's 200 OK", code, got)
	}
	if _, got := httpGet(t, metrics+"/metrics"); !strings.Contains(got, `datasets_status{dataset="products"} 2`) {
		t.Fatalf("metrics lack datasets_status 2 (ready) for products")
	}

	count := func() string {
		a := rt.query(t, "SELECT count(*) AS n FROM products", 0, "Cache-Control", "no-cache")
		return strings.TrimSpace(a.body)
	}
	if got := count(); got != `[{"n":4}]` {
		t.Fatalf("products before = %s, want 4 rows", got)
	}
	refresh := func(body string) {
		t.Helper()
		resp, err := http.Post(rt.url+"/v1/datasets/products/acceleration/refresh", "application/json", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("refresh %s = %d %s, want 201", body, resp.StatusCode, b)
		}
	}
	refresh(`{"refresh_sql": "SELECT * FROM products WHERE id <= 2", "refresh_mode": "full"}`)
	waitFor(t, "the override refresh to leave 2 products", func() bool { return count() == `[{"n":2}]` })
	refresh("null")
	waitFor(t, "the next refresh to use the spicepod's settings again", func() bool { return count() == `[{"n":4}]` })
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
