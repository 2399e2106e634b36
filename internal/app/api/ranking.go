package api

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/cqrs-spice/cqrs/internal/app/ranking"
	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/wire"
)

// QueryMinPosition is the query parameter that may stand in for the
// Spice-Min-Position header.
const QueryMinPosition = "min_position"

// rankingTitle heads the text answer, as in the recipe.
const rankingTitle = "==== Leading Products ====\n"

// handleRanking answers the ranking from reader: the recipe's text by default,
// JSON for Accept: application/json. Spice-Position says which source position the
// answer reflects.
func (s *Server) handleRanking(reader RankingReader) http.HandlerFunc {
	var last atomic.Pointer[rendered]
	return func(w http.ResponseWriter, r *http.Request) {
		req, err := rankingRequest(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		res, err := reader.Ranking(r.Context(), req)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		h := w.Header()
		h.Set(wire.HeaderPosition, res.Position.String())
		if res.CacheStatus != "" {
			h.Set(wire.HeaderCacheStatus, res.CacheStatus)
		}
		h.Set("Vary", "Accept")
		body := last.Load()
		if body == nil || !slices.Equal(body.rows, res.Rows) {
			body = render(res.Rows)
			last.Store(body)
		}
		if wantsJSON(r) {
			if body.json == nil {
				writeJSON(w, http.StatusOK, body.rows)
				return
			}
			h.Set("Content-Type", "application/json")
			_, _ = w.Write(body.json)
			return
		}
		h.Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(body.text)
	}
}

// rendered is an answer's body in both formats. A handler keeps the last one
// and sends it again while the rows are the same (whatever the position, which
// goes in a header), so an unchanged ranking is not formatted again.
type rendered struct {
	rows       []ranking.Row
	text, json []byte
}

func render(rows []ranking.Row) *rendered {
	if rows == nil {
		rows = []ranking.Row{}
	}
	out := &rendered{rows: slices.Clone(rows), text: renderText(rows)}
	if b, err := json.Marshal(rows); err == nil { // else writeJSON answers 500
		out.json = append(b, '\n')
	}
	return out
}

// renderText formats rows as the recipe's app does.
func renderText(rows []ranking.Row) []byte {
	b := make([]byte, 0, len(rankingTitle)+len(rows)*48)
	b = append(b, rankingTitle...)
	for _, row := range rows {
		b = fmt.Appendf(b, "%10d sold: %s\n", row.Count, row.Name)
	}
	return b
}

// rankingRequest reads the minimum position (header, else query parameter) and
// whether the client asks to bypass the results cache.
func rankingRequest(r *http.Request) (ranking.Request, error) {
	var req ranking.Request
	v, from := r.Header.Get(wire.HeaderMinPosition), wire.HeaderMinPosition
	if v == "" && r.URL.RawQuery != "" { // Query parses into a new map every time
		v, from = r.URL.Query().Get(QueryMinPosition), QueryMinPosition
	}
	if v != "" {
		lsn, err := position.Parse(v)
		if err != nil {
			return req, requestErrorf(errBadRequest, "%s %q is not a position: send the %s of an earlier answer, an LSN like 0/16B3748", from, v, wire.HeaderPosition)
		}
		req.MinPosition = lsn
	}
	req.NoCache = wire.WantsNoCache(r.Header.Values(wire.HeaderCacheControl)...)
	return req, nil
}

// wantsJSON reports whether the Accept header names application/json.
func wantsJSON(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return false
	}
	for part := range strings.SplitSeq(accept, ",") {
		if mt, _, err := mime.ParseMediaType(part); err == nil && mt == "application/json" {
			return true
		}
	}
	return false
}
