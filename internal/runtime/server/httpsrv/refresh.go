package httpsrv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/cqrs-spice/cqrs/internal/logging"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// maxRefreshBody bounds the body of a refresh request: three short fields.
const maxRefreshBody = 64 << 10

// refreshBody is upstream's body of a refresh request (its RefreshOverrides):
// each field, when present, applies to this one refresh.
type refreshBody struct {
	RefreshSQL  *string `json:"refresh_sql"`
	RefreshMode *string `json:"refresh_mode"`
	MaxJitter   *string `json:"refresh_jitter_max"`
}

const refreshBodyHelp = `send no body, or JSON {"refresh_sql": "SELECT * FROM <dataset> WHERE ...", "refresh_mode": "full" | "append", "refresh_jitter_max": "10s"}, each field optional`

// POST /v1/datasets/{name}/acceleration/refresh
func (s *Server) refresh(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	o, err := readOverrides(r.Body)
	if err != nil {
		writeMessage(w, http.StatusBadRequest, err.Error())
		return
	}
	err = s.engine.RefreshWith(name, o)
	switch {
	case err == nil:
		writeMessage(w, http.StatusCreated, fmt.Sprintf("Dataset refresh triggered for %s.", name))
	case errors.Is(err, engine.ErrUnknownDataset):
		writeMessage(w, http.StatusNotFound, fmt.Sprintf("Dataset %s not found.", name))
	case errors.Is(err, engine.ErrNotAccelerated):
		writeMessage(w, http.StatusBadRequest, fmt.Sprintf("Dataset %s does not have acceleration enabled.", name))
	case errors.Is(err, engine.ErrInvalidOverride):
		writeMessage(w, http.StatusBadRequest, err.Error())
	default:
		s.Logger.Error("refresh failed", "dataset", name, logging.ErrorKey, err)
		writeMessage(w, http.StatusInternalServerError, err.Error())
	}
}

// readOverrides decodes a refresh body. No body and JSON null (what gospice
// sends without options) mean no overrides; malformed JSON, unknown fields
// and values that are not allowed are errors that say what is.
func readOverrides(body io.Reader) (engine.RefreshOverrides, error) {
	var o engine.RefreshOverrides
	raw, err := io.ReadAll(io.LimitReader(body, maxRefreshBody+1))
	if err != nil {
		return o, fmt.Errorf("read request body: %v; %s", err, refreshBodyHelp)
	}
	if len(raw) > maxRefreshBody {
		return o, fmt.Errorf("request body larger than %d bytes; %s", maxRefreshBody, refreshBodyHelp)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var b refreshBody
	if err := dec.Decode(&b); err != nil {
		return o, fmt.Errorf("malformed refresh request: %v; %s", err, refreshBodyHelp)
	}
	if dec.More() {
		return o, fmt.Errorf("malformed refresh request: more than one JSON value; %s", refreshBodyHelp)
	}
	if b.RefreshSQL != nil {
		o.SQL = *b.RefreshSQL
		if o.SQL == "" {
			return o, fmt.Errorf("refresh_sql is empty; %s", refreshBodyHelp)
		}
	}
	if b.RefreshMode != nil {
		switch m := spicepod.RefreshMode(*b.RefreshMode); m {
		case spicepod.RefreshFull, spicepod.RefreshAppend:
			o.Mode = m
		default:
			return o, fmt.Errorf("refresh_mode %q is not allowed for one refresh: use full or append", *b.RefreshMode)
		}
	}
	if b.MaxJitter != nil {
		d, err := time.ParseDuration(*b.MaxJitter)
		if err != nil || d < 0 {
			return o, fmt.Errorf("refresh_jitter_max %q is not a duration: give one such as 500ms or 10s", *b.MaxJitter)
		}
		o.MaxJitter = d
	}
	return o, nil
}
