package httpsrv

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

type format struct {
	contentType string
	write       func(io.Writer, *engine.Result) error
}

var (
	jsonFormat = format{"application/json", writeJSON}
	csvFormat  = format{"text/csv; charset=utf-8", writeCSV}
	textFormat = format{"text/plain; charset=utf-8", writeText}
	// arrowFormat is the Arrow IPC stream format, as upstream answers it: the schema
	// first (even for zero rows), then every record batch.
	arrowFormat = format{arrowStreamType, writeArrow}
)

const arrowStreamType = "application/vnd.apache.arrow.stream"

// negotiate picks the first supported media type of an Accept header; JSON when
// there is none or nothing matches, as upstream does.
func negotiate(accept string) format {
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "application/json", "*/*":
			return jsonFormat
		case "text/csv":
			return csvFormat
		case "text/plain":
			return textFormat
		case arrowStreamType:
			return arrowFormat
		}
	}
	return jsonFormat
}

// writeJSON writes an array of row objects, streaming row by row.
func writeJSON(w io.Writer, res *engine.Result) error {
	if _, err := io.WriteString(w, "["); err != nil {
		return err
	}
	names := fieldNames(res.Schema)
	keys := make([][]byte, len(names))
	for i, n := range names {
		keys[i], _ = json.Marshal(n)
	}
	first := true
	for _, rec := range res.Records {
		for row := 0; row < int(rec.NumRows()); row++ {
			var b strings.Builder
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteByte('{')
			for c := 0; c < int(rec.NumCols()); c++ {
				if c > 0 {
					b.WriteByte(',')
				}
				b.Write(keys[c])
				b.WriteByte(':')
				v, err := json.Marshal(rec.Column(c).GetOneForMarshal(row))
				if err != nil {
					return fmt.Errorf("encode column %s: %w", names[c], err)
				}
				b.Write(v)
			}
			b.WriteByte('}')
			if _, err := io.WriteString(w, b.String()); err != nil {
				return err
			}
		}
	}
	_, err := io.WriteString(w, "]\n")
	return err
}

func writeCSV(w io.Writer, res *engine.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(fieldNames(res.Schema)); err != nil {
		return err
	}
	for _, rec := range res.Records {
		for row := 0; row < int(rec.NumRows()); row++ {
			if err := cw.Write(rowStrings(rec, row)); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeText(w io.Writer, res *engine.Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(fieldNames(res.Schema), "\t"))
	for _, rec := range res.Records {
		for row := 0; row < int(rec.NumRows()); row++ {
			fmt.Fprintln(tw, strings.Join(rowStrings(rec, row), "\t"))
		}
	}
	return tw.Flush()
}

// writeArrow writes the result as an Arrow IPC stream.
func writeArrow(w io.Writer, res *engine.Result) error {
	iw := ipc.NewWriter(w, ipc.WithSchema(res.Schema))
	for _, rec := range res.Records {
		if err := iw.Write(rec); err != nil {
			return fmt.Errorf("encode arrow stream: %w", err)
		}
	}
	return iw.Close()
}

func fieldNames(s *arrow.Schema) []string {
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	return names
}

func rowStrings(rec arrow.RecordBatch, row int) []string {
	out := make([]string, rec.NumCols())
	for c := range out {
		col := rec.Column(c)
		if col.IsNull(row) {
			out[c] = ""
			continue
		}
		out[c] = col.ValueStr(row)
	}
	return out
}
