package engine

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// Metrics are the engine's Prometheus metrics, named as upstream's where upstream
// has one.
type Metrics struct {
	loadState       *prometheus.GaugeVec
	status          *prometheus.GaugeVec
	refreshErrors   *prometheus.CounterVec
	lastRefresh     *prometheus.GaugeVec
	refreshDuration *prometheus.HistogramVec
	rows            *prometheus.GaugeVec
	watermark       *prometheus.GaugeVec
	queryDuration   prometheus.Histogram
	queryFailures   prometheus.Counter
	cacheHits       prometheus.Counter
	cacheMisses     prometheus.Counter
	cacheBytes      prometheus.Gauge
	cacheItems      prometheus.Gauge
	transactions    *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	ms := []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 10000}
	m := &Metrics{
		loadState: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dataset_load_state",
			Help: "Load state per dataset: 0 initializing, 1 ready, 2 refreshing, 3 error."}, []string{"dataset"}),
		status: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "datasets_status",
			Help: "Status per dataset, upstream's numbering: 1 initializing, 2 ready, 4 error, 5 refreshing."}, []string{"dataset"}),
		refreshErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dataset_acceleration_refresh_errors",
			Help: "Failed refreshes per dataset."}, []string{"dataset"}),
		lastRefresh: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dataset_acceleration_last_refresh_time_ms",
			Help: "Unix time of the last successful refresh, in milliseconds."}, []string{"dataset"}),
		refreshDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "dataset_acceleration_refresh_duration_ms",
			Help: "Duration of refreshes and view recomputations, in milliseconds.", Buckets: ms}, []string{"dataset"}),
		rows: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dataset_acceleration_rows",
			Help: "Rows held after the last full or append refresh."}, []string{"dataset"}),
		watermark: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dataset_watermark_lsn",
			Help: "Source position (Postgres LSN as a number) the dataset's data reflects."}, []string{"dataset"}),
		queryDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "query_duration_ms",
			Help: "Query latency in the engine, in milliseconds.", Buckets: ms}),
		queryFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "query_failures", Help: "Failed queries."}),
		cacheHits:     prometheus.NewCounter(prometheus.CounterOpts{Name: "results_cache_hits", Help: "Results cache hits."}),
		cacheMisses:   prometheus.NewCounter(prometheus.CounterOpts{Name: "results_cache_misses", Help: "Results cache misses."}),
		cacheBytes:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "results_cache_size_bytes", Help: "Bytes held by the results cache."}),
		cacheItems:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "results_cache_items", Help: "Entries in the results cache."}),
		transactions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "store_transactions_total",
			Help: "Store transactions of change feeds: kind data applied changes, kind position only moved watermarks (heartbeats, progress)."}, []string{"kind"}),
	}
	reg.MustRegister(m.loadState, m.status, m.refreshErrors, m.lastRefresh, m.refreshDuration, m.rows, m.watermark,
		m.queryDuration, m.queryFailures, m.cacheHits, m.cacheMisses, m.cacheBytes, m.cacheItems, m.transactions)
	return m
}

func (m *Metrics) setState(name string, s State) {
	v := map[State]float64{StateInitializing: 0, StateReady: 1, StateRefreshing: 2, StateError: 3}[s]
	m.loadState.WithLabelValues(name).Set(v)
	m.status.WithLabelValues(name).Set(map[State]float64{StateInitializing: 1, StateReady: 2, StateError: 4, StateRefreshing: 5}[s])
}

func (m *Metrics) observeRefresh(name string, d time.Duration, rows int64, wm position.LSN) {
	m.refreshDuration.WithLabelValues(name).Observe(float64(d.Microseconds()) / 1000)
	m.lastRefresh.WithLabelValues(name).Set(float64(time.Now().UnixMilli()))
	if rows >= 0 {
		m.rows.WithLabelValues(name).Set(float64(rows))
	}
	m.watermark.WithLabelValues(name).Set(float64(wm))
}

func (m *Metrics) observeQuery(d time.Duration, err error) {
	m.queryDuration.Observe(float64(d.Microseconds()) / 1000)
	if err != nil {
		m.queryFailures.Inc()
	}
}
