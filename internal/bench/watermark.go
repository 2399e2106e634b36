package bench

import (
	"net/http"
	"strings"
)

// Hops of the watermark freshness: each runtime's own watermark of one dataset,
// without the api and without reading the data.
const (
	HopWatermarkAccelerated  = "runtime 1 watermark (orders)"
	HopWatermarkMaterialized = "runtime 2 watermark (rankings)"
)

// Queries of the watermark hops: they read nothing (DuckDB folds WHERE false),
// but their answer waits, with Spice-Min-Position, until the runtime's watermark
// of the table covers the position. The engine wakes such a wait on every
// watermark change, so the answer's arrival is when the watermark covered the
// write, plus one trivial query's latency, with no polling interval.
const (
	watermarkQueryAccelerated  = "SELECT 1 FROM orders WHERE false"
	watermarkQueryMaterialized = "SELECT 1 FROM rankings WHERE false"
)

// RuntimeEndpoint is a runtime's HTTP API and the API key it requires.
type RuntimeEndpoint struct {
	URL    string // http://127.0.0.1:8090; none when empty
	APIKey string // sent as X-API-Key; none when empty
}

// watermarkProbes returns the watermark hops of the runtimes whose HTTP API is
// known.
func watermarkProbes(acc, mat RuntimeEndpoint) []Probe {
	var out []Probe
	for _, w := range []struct {
		hop, query string
		rt         RuntimeEndpoint
	}{
		{HopWatermarkAccelerated, watermarkQueryAccelerated, acc},
		{HopWatermarkMaterialized, watermarkQueryMaterialized, mat},
	} {
		if w.rt.URL == "" {
			continue
		}
		p := Probe{Hop: w.hop, Method: http.MethodPost, URL: strings.TrimRight(w.rt.URL, "/") + "/v1/sql", Body: w.query}
		if w.rt.APIKey != "" {
			p.Header = http.Header{"X-Api-Key": {w.rt.APIKey}}
		}
		out = append(out, p)
	}
	return out
}
