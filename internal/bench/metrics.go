package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics the benchmark reads from a Prometheus endpoint.
const (
	// MetricCPU is the process collector's CPU counter (user + system).
	MetricCPU = "process_cpu_seconds_total"
	// MetricRSS is the process collector's resident memory gauge.
	MetricRSS = "process_resident_memory_bytes"
	// MetricWatermark is the runtimes' gauge of the source position (a Postgres
	// LSN as a number) that a dataset reflects, labelled dataset="<name>".
	MetricWatermark = "dataset_watermark_lsn"
)

// Metrics is one scrape of a Prometheus text exposition, by family name.
type Metrics map[string]*dto.MetricFamily

// Scrape reads and parses url's metrics.
func Scrape(ctx context.Context, client *http.Client, url string) (Metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics %s: %w", url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("metrics %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics %s: status %d", url, resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("metrics %s: %w", url, err)
	}
	return fams, nil
}

// Value is the first sample of the counter, gauge or untyped metric name
// whose labels hold label="value" (any sample when label is empty).
func (m Metrics) Value(name, label, value string) (float64, bool) {
	for _, s := range m[name].GetMetric() {
		if label == "" || slices.ContainsFunc(s.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == label && l.GetValue() == value }) {
			// A sample has one type; the other types' getters read zero.
			return s.GetCounter().GetValue() + s.GetGauge().GetValue() + s.GetUntyped().GetValue(), true
		}
	}
	return 0, false
}

// scrapeValue scrapes url and reads one value of it.
func scrapeValue(ctx context.Context, client *http.Client, url, name, label, value string) (float64, error) {
	m, err := Scrape(ctx, client, url)
	if err != nil {
		return 0, err
	}
	v, ok := m.Value(name, label, value)
	if !ok {
		return 0, fmt.Errorf("metrics %s: no %s", url, name)
	}
	return v, nil
}
