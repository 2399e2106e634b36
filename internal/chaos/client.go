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

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// DefaultRequestTimeout bounds every request of the workload and the checker.
const DefaultRequestTimeout = 15 * time.Second

// Client speaks to the api and to the runtimes' HTTP APIs.
type Client struct {
	API  string // the api's base URL, "http://127.0.0.1:9999"
	HTTP *http.Client
	// Runtimes' HTTP base URLs and API keys (sent as X-API-Key when not empty).
	AcceleratedURL, MaterializedURL string
	AcceleratedKey, MaterializedKey string
	// Runtimes' Prometheus endpoints (".../metrics"), for their memory.
	AcceleratedMetricsURL, MaterializedMetricsURL string
}

// NewClient returns a client of the api at api with DefaultRequestTimeout.
func NewClient(api string) *Client {
	return &Client{API: strings.TrimRight(api, "/"), HTTP: &http.Client{Timeout: DefaultRequestTimeout}}
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
	defer func() { rd.Took = time.Since(rd.At) }()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.API+endpoint, nil)
	if err != nil {
		return nil, rd
	}
	req.Header.Set("Accept", "application/json")
	if min != 0 {
		req.Header.Set(wire.HeaderMinPosition, min.String())
	}
	if noCache {
		req.Header.Set("Cache-Control", "no-cache")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, rd
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	rd.Status = resp.StatusCode
	if !rd.OK() {
		return nil, rd
	}
	if err := json.Unmarshal(b, &rows); err != nil {
		rd.Status = http.StatusBadGateway
		return nil, rd
	}
	rd.Position, _ = position.Parse(resp.Header.Get(wire.HeaderPosition))
	return rows, rd
}

// SQL runs one query on a runtime's /v1/sql, bypassing its results cache, and
// decodes the JSON rows with numbers as json.Number.
func (c *Client) SQL(ctx context.Context, base, key, query string) ([]map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/sql", strings.NewReader(query))
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", base, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Cache-Control", "no-cache")
	setKey(req, key)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", base, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("query %s: %s: %s", base, resp.Status, bytes.TrimSpace(b))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var rows []map[string]any
	if err := dec.Decode(&rows); err != nil {
		return nil, fmt.Errorf("query %s: decode %.200q: %w", base, b, err)
	}
	return rows, nil
}

// Watermarks reads a runtime's datasets and views with their watermarks.
func (c *Client) Watermarks(ctx context.Context, runtime, base, key string) ([]WatermarkSample, error) {
	ds, err := c.statuses(ctx, base, key)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var out []WatermarkSample
	for _, d := range ds {
		if d.Status != nil {
			wm, _ := position.Parse(d.Status.Watermark)
			out = append(out, WatermarkSample{Runtime: runtime, Dataset: d.Name, At: now, Watermark: wm})
		}
	}
	return out, nil
}

func setKey(req *http.Request, key string) {
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		if err != nil {
			f, _ := n.Float64()
			return int64(f)
		}
		return i
	case float64:
		return int64(n)
	case string:
		var i int64
		fmt.Sscan(n, &i)
		return i
	}
	return 0
}
