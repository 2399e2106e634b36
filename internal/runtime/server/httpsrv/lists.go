package httpsrv

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// The listing routes (/v1/status, /v1/datasets, /v1/spicepods) answer JSON, or
// CSV with ?format=csv, as upstream does.
const (
	formatJSON = "json"
	formatCSV  = "csv"
)

// listFormat reads ?format=; on a value other than json or csv it answers
// 400 and returns false.
func listFormat(w http.ResponseWriter, v string) (string, bool) {
	switch v {
	case "", formatJSON:
		return formatJSON, true
	case formatCSV:
		return formatCSV, true
	}
	writeMessage(w, http.StatusBadRequest, fmt.Sprintf("format %q is not supported: use format=json (the default) or format=csv", v))
	return "", false
}

// writeCSVRows answers rows as CSV under a header of cols.
func writeCSVRows[T any](w http.ResponseWriter, cols []string, rows []T, row func(T) []string) {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	cw := csv.NewWriter(w)
	_ = cw.Write(cols)
	for _, r := range rows {
		_ = cw.Write(row(r))
	}
	cw.Flush()
}

func boolString(b bool) string { return strconv.FormatBool(b) }

// writeMessage answers upstream's {"message": ...} body.
func writeMessage(w http.ResponseWriter, code int, msg string) {
	writeJSONValue(w, code, map[string]string{"message": msg})
}

func writeJSONValue(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
