package httpsrv

import (
	"net/http"
)

// service is one entry of GET /v1/status, upstream's shape: one per
// endpoint upstream has (http, flight, metrics, opentelemetry).
type service struct {
	Name     string `json:"name"`
	Endpoint string `json:"endpoint"`
	Status   string `json:"status"`
}

// statusServices are upstream's endpoints, in its order.
var statusServices = []string{"http", "flight", "metrics", "opentelemetry"}

// GET /v1/status[?format=csv]: every endpoint this runtime listens on is
// Ready (it is served by this process); one it does not open is Disabled
// with endpoint N/A, as upstream reports a metrics port left off. This
// runtime exports no OpenTelemetry, so that one is always Disabled.
func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	format, ok := listFormat(w, r.URL.Query().Get("format"))
	if !ok {
		return
	}
	open := map[string]string{}
	for _, e := range s.Endpoints {
		open[e.Name] = e.Addr
	}
	out := make([]service, 0, len(statusServices))
	for _, name := range statusServices {
		if addr, ok := open[name]; ok {
			out = append(out, service{Name: name, Endpoint: addr, Status: "Ready"})
			continue
		}
		out = append(out, service{Name: name, Endpoint: "N/A", Status: "Disabled"})
	}
	if format == formatCSV {
		writeCSVRows(w, []string{"name", "endpoint", "status"}, out, func(s service) []string {
			return []string{s.Name, s.Endpoint, s.Status}
		})
		return
	}
	writeJSONValue(w, http.StatusOK, out)
}
