package httpsrv

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// dataset is one entry of GET /v1/datasets, shaped like upstream's, with the
// engine's status inlined when ?status=true.
type dataset struct {
	From                string         `json:"from,omitempty"`
	Name                string         `json:"name"`
	Kind                string         `json:"kind"`
	ReplicationEnabled  bool           `json:"replication_enabled"`
	AccelerationEnabled bool           `json:"acceleration_enabled"`
	Status              *engine.Status `json:"status,omitempty"`
}

func (s *Server) datasets(w http.ResponseWriter, r *http.Request) {
	withStatus := r.URL.Query().Get("status") == "true"
	var out []dataset
	for _, st := range s.engine.Status(r.Context()) {
		d := dataset{From: st.From, Name: st.Name, Kind: st.Kind, AccelerationEnabled: st.Accelerated}
		if withStatus {
			st := st
			d.Status = &st
		}
		out = append(out, d)
	}
	writeJSONValue(w, http.StatusOK, out)
}

func (s *Server) refresh(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	err := s.engine.Refresh(name)
	switch {
	case err == nil:
		writeJSONValue(w, http.StatusCreated, map[string]string{"message": fmt.Sprintf("Dataset refresh triggered for %s.", name)})
	case errors.Is(err, engine.ErrUnknownDataset):
		writeJSONValue(w, http.StatusNotFound, map[string]string{"message": fmt.Sprintf("Dataset %s not found.", name)})
	case errors.Is(err, engine.ErrNotAccelerated):
		writeJSONValue(w, http.StatusBadRequest, map[string]string{"message": fmt.Sprintf("Dataset %s does not have acceleration enabled.", name)})
	default:
		writeJSONValue(w, http.StatusInternalServerError, map[string]string{"message": err.Error()})
	}
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	type endpoint struct {
		Name     string `json:"name"`
		Endpoint string `json:"endpoint"`
		Status   string `json:"status"`
	}
	var eps []endpoint
	for _, e := range s.Endpoints {
		eps = append(eps, endpoint{Name: e.Name, Endpoint: e.Addr, Status: "Ready"})
	}
	ready := "Not Ready"
	if s.engine.Ready() {
		ready = "Ready"
	}
	writeJSONValue(w, http.StatusOK, map[string]any{
		"status":    ready,
		"endpoints": eps,
		"datasets":  s.engine.Status(r.Context()),
	})
}

func writeJSONValue(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
