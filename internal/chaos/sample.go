package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/position"
)

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

// Sample reads runtime's status and metrics; ok is false when neither answered.
func (c *Client) Sample(ctx context.Context, runtime string, token position.LSN) (RuntimeSample, bool) {
	base, key, metrics := c.AcceleratedURL, c.AcceleratedKey, c.AcceleratedMetricsURL
	if runtime == ServiceMaterialized {
		base, key, metrics = c.MaterializedURL, c.MaterializedKey, c.MaterializedMetricsURL
	}
	s := RuntimeSample{Runtime: runtime, At: time.Now()}
	ok := false
	if metrics != "" {
		if m, err := bench.Scrape(ctx, c.HTTP, metrics); err == nil {
			v, _ := m.Value(bench.MetricRSS, "", "")
			s.RSS, ok = int64(v), v > 0
		}
	}
	ds, err := c.statuses(ctx, base, key)
	if err != nil {
		return s, ok
	}
	var low position.LSN
	for _, d := range ds {
		if d.Status == nil {
			continue
		}
		if d.Status.LagBytes != nil && (s.LagBytes == nil || *d.Status.LagBytes > *s.LagBytes) {
			s.LagBytes = d.Status.LagBytes
		}
		if d.Status.LagSeconds != nil && (s.LagSeconds == nil || *d.Status.LagSeconds > *s.LagSeconds) {
			s.LagSeconds = d.Status.LagSeconds
		}
		if wm, err := position.Parse(d.Status.Watermark); err == nil && (low == 0 || wm < low) {
			low = wm
		}
	}
	if low != 0 && token > low {
		s.Behind = int64(token - low)
	}
	return s, true
}

type datasetStatus struct {
	Name   string `json:"name"`
	Status *struct {
		Watermark  string   `json:"watermark"`
		LagBytes   *int64   `json:"lag_bytes"`
		LagSeconds *float64 `json:"lag_seconds"`
	} `json:"detail"`
}

func (c *Client) statuses(ctx context.Context, base, key string) ([]datasetStatus, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/datasets?status=true", nil)
	if err != nil {
		return nil, err
	}
	setKey(req, key)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read %s datasets: %s", base, resp.Status)
	}
	var ds []datasetStatus
	if err := json.NewDecoder(resp.Body).Decode(&ds); err != nil {
		return nil, fmt.Errorf("decode %s datasets: %w", base, err)
	}
	return ds, nil
}
