package cdc

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// Metrics are the change feeds' Prometheus metrics. One Metrics serves every feed
// of a runtime. A nil *Metrics records nothing.
type Metrics struct {
	resnapshots *prometheus.CounterVec
	lagBytes    *prometheus.GaugeVec
	lagSeconds  *prometheus.GaugeVec
	appliedLSN  *prometheus.GaugeVec
}

// NewMetrics creates the metrics and registers them with reg; a nil reg gives nil
// (no metrics).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	if reg == nil {
		return nil
	}
	m := &Metrics{
		resnapshots: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cdc_resnapshots_total",
			Help: "New snapshots a change feed had to take because it could not resume: slot_missing, slot_lost, gap, schema_change, publication_changed, incomplete."},
			[]string{"reason"}),
		lagBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cdc_lag_bytes",
			Help: "WAL bytes between the source's current position and what the dataset reflects."}, []string{"dataset"}),
		lagSeconds: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cdc_lag_seconds",
			Help: "Seconds since the commit (or heartbeat) that the dataset's data reflects was made on the source."}, []string{"dataset"}),
		appliedLSN: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cdc_applied_lsn",
			Help: "Source position (LSN as a number) applied and acknowledged by the change feed of a replication slot."}, []string{"slot"}),
	}
	reg.MustRegister(m.resnapshots, m.lagBytes, m.lagSeconds, m.appliedLSN)
	return m
}

func (m *Metrics) resnapshot(reason string) {
	if m != nil {
		m.resnapshots.WithLabelValues(reason).Inc()
	}
}

func (m *Metrics) observe(slot string, datasets []string, applied position.LSN, lagBytes *int64, lagSeconds *float64) {
	if m == nil {
		return
	}
	m.appliedLSN.WithLabelValues(slot).Set(float64(applied))
	for _, ds := range datasets {
		if lagBytes != nil {
			m.lagBytes.WithLabelValues(ds).Set(float64(*lagBytes))
		}
		if lagSeconds != nil {
			m.lagSeconds.WithLabelValues(ds).Set(*lagSeconds)
		}
	}
}
