package httpsrv

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// Spicepod describes the loaded spicepod for GET /v1/spicepods, in the shape
// of upstream's answer as far as its clients read it. Params and secrets are
// never listed.
type Spicepod struct {
	Version  string       `json:"version"`
	Kind     string       `json:"kind"`
	Name     string       `json:"name"`
	Datasets []PodDataset `json:"datasets"`
	Views    []PodView    `json:"views"`
	Models   []struct{}   `json:"models"`
	Depends  []string     `json:"dependencies"`
}

// PodDataset is a dataset of a Spicepod.
type PodDataset struct {
	From string `json:"from"`
	Name string `json:"name"`
}

// PodView is a view of a Spicepod.
type PodView struct {
	Name string `json:"name"`
}

// GET /v1/spicepods[?format=csv]
func (s *Server) spicepods(w http.ResponseWriter, r *http.Request) {
	format, ok := listFormat(w, r.URL.Query().Get("format"))
	if !ok {
		return
	}
	pods := make([]Spicepod, 0, len(s.Spicepods))
	for _, p := range s.Spicepods {
		p.Kind = "Spicepod"
		p.Models, p.Depends = []struct{}{}, []string{}
		if p.Datasets == nil {
			p.Datasets = []PodDataset{}
		}
		if p.Views == nil {
			p.Views = []PodView{}
		}
		pods = append(pods, p)
	}
	if format == formatCSV {
		cols := []string{"name", "version", "datasets_count", "models_count", "dependencies_count"}
		writeCSVRows(w, cols, pods, func(p Spicepod) []string {
			return []string{p.Name, p.Version, strconv.Itoa(len(p.Datasets)), "0", "0"}
		})
		return
	}
	writeJSONValue(w, http.StatusOK, pods)
}

// GET /v1/catalogs: this runtime serves no catalogs (spicepod catalogs are
// refused), so the list is empty, in JSON or, with Accept: text/csv, CSV.
func (s *Server) catalogs(w http.ResponseWriter, r *http.Request) {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/csv" {
			w.Header().Set("Content-Type", "text/csv; charset=utf-8")
			w.WriteHeader(http.StatusOK)
			return
		}
	}
	writeJSONValue(w, http.StatusOK, []struct{}{})
}
