package engine

import (
	"time"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// State is the load state of a dataset or view, as upstream names them.
type State string

// States.
const (
	StateInitializing State = "initializing" // first load not finished
	StateReady        State = "ready"        // loaded; LastError may hold a later refresh failure
	StateRefreshing   State = "refreshing"   // loaded, a refresh is running
	StateError        State = "error"        // first load failed; retrying
)

// Status describes a dataset or view, for /v1/datasets?status=true and /v1/status.
type Status struct {
	Name        string       `json:"name"`
	Kind        string       `json:"kind"` // "dataset" or "view"
	From        string       `json:"from,omitempty"`
	Accelerated bool         `json:"accelerated"`
	RefreshMode string       `json:"refresh_mode,omitempty"`
	State       State        `json:"state"`
	Ready       bool         `json:"ready"`
	Fresh       bool         `json:"fresh"` // false while the source is unreachable or lagging
	Rows        int64        `json:"rows"`
	Watermark   position.LSN `json:"-"`
	WatermarkS  string       `json:"watermark"`
	LastRefresh *time.Time   `json:"last_refresh,omitempty"`
	LastError   string       `json:"last_error,omitempty"`
	LastErrorAt *time.Time   `json:"last_error_at,omitempty"`
	Refreshes   int64        `json:"refreshes"`
	Failures    int64        `json:"failures"`
	// Lag, when the feed can tell, in bytes of WAL and in time.
	LagBytes   *int64   `json:"lag_bytes,omitempty"`
	LagSeconds *float64 `json:"lag_seconds,omitempty"`
	// Subscription, while other runtimes subscribe to the dataset or view:
	// how its rows are maintained ("incremental: ..." or "recompute: <why>")
	// and by how many subscribers.
	Subscription *SubscriptionInfo `json:"subscription,omitempty"`
}

// TableInfo describes a dataset or view for catalog listings (Flight SQL
// GetTables).
type TableInfo struct {
	Name string
	Type string // "BASE TABLE" for datasets, "VIEW" for views
}
