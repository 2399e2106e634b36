package httpsrv

import (
	"net/http"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// dataset is one entry of GET /v1/datasets, in upstream's shape: status is
// upstream's word for the state ("Ready", "Refreshing", ...) when
// ?status=true. Kind and, with ?status=true, Detail (rows, watermark, lag,
// last error) are this runtime's own; upstream's clients ignore them.
type dataset struct {
	From                string         `json:"from"`
	Name                string         `json:"name"`
	ReplicationEnabled  bool           `json:"replication_enabled"`
	AccelerationEnabled bool           `json:"acceleration_enabled"`
	Status              string         `json:"status,omitempty"`
	Kind                string         `json:"kind"`
	Detail              *engine.Status `json:"detail,omitempty"`
}

// GET /v1/datasets[?status=true][&source=postgres][&format=csv]
func (s *Server) datasets(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	format, ok := listFormat(w, q.Get("format"))
	if !ok {
		return
	}
	withStatus := q.Get("status") == "true"
	source := q.Get("source")
	out := []dataset{}
	for _, st := range s.engine.Status(r.Context()) {
		if source != "" && connector(st.From) != source {
			continue
		}
		d := dataset{From: st.From, Name: st.Name, Kind: st.Kind, AccelerationEnabled: st.Accelerated}
		if withStatus {
			st := st
			d.Status, d.Detail = componentStatus(st), &st
		}
		out = append(out, d)
	}
	if format == formatCSV {
		cols := []string{"from", "name", "replication_enabled", "acceleration_enabled"}
		if withStatus {
			cols = append(cols, "status")
		}
		writeCSVRows(w, cols, out, func(d dataset) []string {
			return []string{d.From, d.Name, boolString(d.ReplicationEnabled), boolString(d.AccelerationEnabled), d.Status}[:len(cols)]
		})
		return
	}
	writeJSONValue(w, http.StatusOK, out)
}

// connector is the connector of a from: value ("postgres" of
// "postgres:public.orders"), as upstream's ?source= compares it.
func connector(from string) string {
	if c, _, ok := strings.Cut(from, ":"); ok {
		return c
	}
	return from
}

// componentStatus is upstream's name of a dataset's or view's state.
func componentStatus(st engine.Status) string {
	switch st.State {
	case engine.StateReady:
		return "Ready"
	case engine.StateRefreshing:
		return "Refreshing"
	case engine.StateError:
		return "Error"
	default:
		return "Initializing"
	}
}
