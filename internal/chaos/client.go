package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// DefaultRequestTimeout bounds every request of the workload and the checker.
const DefaultRequestTimeout = 15 * time.Second

// Client speaks to the api, to the runtimes' HTTP APIs and to Postgres.
type Client struct {
	API         string // the api's base URL, "http://127.0.0.1:9999"
	HTTP        *http.Client
	PostgresURL string
	// Runtimes are the runtimes' HTTP APIs (keys sent as X-API-Key) and
	// Prometheus endpoints, by service.
	Runtimes map[string]Runtime
}

// Runtime is where a runtime is read.
type Runtime struct{ URL, Key, MetricsURL string }

// do sends one request with key as X-API-Key (none when empty) and reads the
// whole answer; status is 0 when none came.
func (c *Client) do(ctx context.Context, method, url, key, body string, hdr http.Header) (int, http.Header, []byte) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, nil
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// orderOf reads a write's answer: the Read always, the Ack only when the api
// answered 201 with the order and its token.
func orderOf(res *vegeta.Result) (ack Ack, rd Read, ok bool) {
	rd = Read{Reader: "writer", Endpoint: EndpointOrders, At: res.Timestamp, Took: res.Latency, Status: int(res.Code)}
	if res.Code != http.StatusCreated {
		return Ack{}, rd, false
	}
	var o struct {
		ID        int64 `json:"id"`
		ProductID int64 `json:"product_id"`
		Count     int64 `json:"count"`
	}
	pos, perr := position.Parse(res.Headers.Get(wire.HeaderPosition))
	if err := json.Unmarshal(res.Body, &o); err != nil || perr != nil || o.ID == 0 {
		rd.Status = http.StatusBadGateway // acknowledged without an id or token: not an acknowledgement
		return Ack{}, rd, false
	}
	return Ack{ID: o.ID, ProductID: o.ProductID, Count: o.Count, Position: pos, At: rd.At}, rd, true
}

// Ranking reads one ranking endpoint as JSON, asking for at least min when not
// zero; noCache bypasses the results caches.
func (c *Client) Ranking(ctx context.Context, reader, endpoint string, min position.LSN, noCache bool) (rows []RankRow, rd Read) {
	rd = Read{Reader: reader, Endpoint: endpoint, At: time.Now(), MinPosition: min}
	hdr := http.Header{"Accept": {"application/json"}}
	if min != 0 {
		hdr.Set(wire.HeaderMinPosition, min.String())
	}
	if noCache {
		hdr.Set(wire.HeaderCacheControl, wire.NoCache)
	}
	status, h, b := c.do(ctx, http.MethodGet, c.API+endpoint, "", "", hdr)
	rd.Took, rd.Status = time.Since(rd.At), status
	if !rd.OK() {
		return nil, rd
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		rd.Status = http.StatusBadGateway
		return nil, rd
	}
	rd.Position, _ = position.Parse(h.Get(wire.HeaderPosition))
	return rows, rd
}

// SQL runs one query on a runtime's /v1/sql, bypassing its results cache, and
// decodes the JSON rows with numbers as json.Number.
func (c *Client) SQL(ctx context.Context, runtime, query string) ([]map[string]any, error) {
	rt := c.Runtimes[runtime]
	status, _, b := c.do(ctx, http.MethodPost, rt.URL+"/v1/sql", rt.Key, query,
		http.Header{"Accept": {"application/json"}, wire.HeaderCacheControl: {wire.NoCache}})
	if status != http.StatusOK {
		return nil, fmt.Errorf("query %s: status %d: %s", rt.URL, status, bytes.TrimSpace(b))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var rows []map[string]any
	if err := dec.Decode(&rows); err != nil {
		return nil, fmt.Errorf("query %s: decode %.200q: %w", rt.URL, b, err)
	}
	return rows, nil
}

// RuntimeSample is one reading of a runtime under the workload: its resident
// memory and how far behind it is.
type RuntimeSample struct {
	Runtime string
	At      time.Time
	RSS     int64 // bytes; 0 when the metrics did not answer
	// LagBytes and LagSeconds are the largest lag any dataset's status
	// reported (lag_bytes, lag_seconds); nil when none reported one.
	LagBytes   *int64
	LagSeconds *float64
	// Behind is the workload's token less the lowest watermark of the
	// runtime's datasets, in bytes of WAL: what it has yet to apply of the
	// acknowledged writes. Zero when it is caught up or the status did not
	// answer.
	Behind int64
}

// Sample reads a runtime's metrics and its datasets' status: the sample,
// each dataset's watermark, and whether either answered.
func (c *Client) Sample(ctx context.Context, runtime string, token position.LSN) (RuntimeSample, []WatermarkSample, bool) {
	rt := c.Runtimes[runtime]
	s := RuntimeSample{Runtime: runtime, At: time.Now()}
	if m, err := bench.Scrape(ctx, c.HTTP, rt.MetricsURL); err == nil {
		v, _ := m.Value(bench.MetricRSS, "", "")
		s.RSS = int64(v)
	}
	var ds []struct {
		Name   string `json:"name"`
		Status *struct {
			Watermark  string   `json:"watermark"`
			LagBytes   *int64   `json:"lag_bytes"`
			LagSeconds *float64 `json:"lag_seconds"`
		} `json:"detail"`
	}
	status, _, b := c.do(ctx, http.MethodGet, rt.URL+"/v1/datasets?status=true", rt.Key, "", nil)
	if status != http.StatusOK || json.Unmarshal(b, &ds) != nil {
		return s, nil, s.RSS > 0
	}
	var marks []WatermarkSample
	var low position.LSN
	for _, d := range ds {
		if d.Status == nil {
			continue
		}
		wm, _ := position.Parse(d.Status.Watermark)
		marks = append(marks, WatermarkSample{Runtime: runtime, Dataset: d.Name, At: s.At, Watermark: wm})
		if d.Status.LagBytes != nil && (s.LagBytes == nil || *d.Status.LagBytes > *s.LagBytes) {
			s.LagBytes = d.Status.LagBytes
		}
		if d.Status.LagSeconds != nil && (s.LagSeconds == nil || *d.Status.LagSeconds > *s.LagSeconds) {
			s.LagSeconds = d.Status.LagSeconds
		}
		if wm != 0 && (low == 0 || wm < low) {
			low = wm
		}
	}
	if low != 0 && token > low {
		s.Behind = int64(token - low)
	}
	return s, marks, true
}

// Status is what a service's readiness check answers: a runtime's
// /v1/ready, the api's /readyz (200 when ready; 0 when nothing answered),
// Postgres 200 when it accepts a query.
func (c *Client) Status(ctx context.Context, service string) int {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if service == ServicePostgres {
		if _, err := c.Postgres(ctx, "SELECT 1"); err != nil {
			return 0
		}
		return http.StatusOK
	}
	url, key := c.API+"/readyz", ""
	if rt, ok := c.Runtimes[service]; ok {
		url, key = rt.URL+"/v1/ready", rt.Key
	}
	status, _, _ := c.do(ctx, http.MethodGet, url, key, "", nil)
	return status
}

// Postgres runs one statement in Postgres by the simple protocol (so that a
// DO block may commit), and returns the first column of its first row as
// text ("" when it returns none).
func (c *Client) Postgres(ctx context.Context, sql string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.PostgresURL)
	if err != nil {
		return "", fmt.Errorf("connect to Postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	res, err := conn.PgConn().Exec(ctx, sql).ReadAll()
	if err != nil {
		return "", fmt.Errorf("%.60s: %w", sql, err)
	}
	for _, r := range res {
		if len(r.Rows) > 0 && len(r.Rows[0]) > 0 {
			return string(r.Rows[0][0]), nil
		}
	}
	return "", nil
}
