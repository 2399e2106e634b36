package bench

import (
	"bufio"
	"cmp"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// StartLog is what a runtime's log says about one start: when its servers were
// up, and whether it took a snapshot (how many rows, how long), resumed from a
// stored position, or subscribed to its upstream.
type StartLog struct {
	FirstLine    time.Time     // the first line's time: the process is running Go code
	Started      time.Time     // "runtime started"; zero when not seen
	SnapshotRows int64         // rows of "snapshot taken"; 0 when none was taken
	SnapshotTook time.Duration // its "took"
	ResumedFrom  string        // the LSN of "resuming from ..."; empty when it did not resume
	Restored     int           // datasets "restored dataset from file"
	Subscribed   bool          // runtime 2: "subscribed"
	// Reconnects counts "change feed failed; reconnecting" (runtime 1) and
	// "subscription ended; subscribing again" (runtime 2) lines; FirstError is
	// the first one's error.
	Reconnects int
	FirstError string
}

// ParseStartLog reads a runtime's log from one start (text or JSON slog lines).
// Lines it does not know are skipped; a start that logged several snapshots (a
// failed first one) keeps the last.
func ParseStartLog(log string) StartLog {
	var s StartLog
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := logFields(sc.Text())
		at, err := time.Parse(time.RFC3339Nano, f["time"])
		if s.FirstLine.IsZero() && err == nil {
			s.FirstLine = at
		}
		switch msg := f["msg"]; msg {
		case "runtime started":
			s.Started = at
		case "snapshot taken":
			s.SnapshotRows, _ = strconv.ParseInt(f["rows"], 10, 64)
			s.SnapshotTook, _ = time.ParseDuration(f["took"])
		case "restored dataset from file":
			s.Restored++
		case "subscribed":
			s.Subscribed = true
		case "change feed failed; reconnecting", "subscription ended; subscribing again":
			s.Reconnects, s.FirstError = s.Reconnects+1, cmp.Or(s.FirstError, f["err"])
		default:
			if lsn, ok := strings.CutPrefix(msg, "resuming from "); ok {
				s.ResumedFrom = lsn
			}
		}
	}
	return s
}

// logFields splits one slog line, JSON or text (key=value, values quoted when
// they hold spaces), into its top-level fields as strings; the first of a
// repeated key counts.
func logFields(line string) map[string]string {
	out := map[string]string{}
	if line = strings.TrimSpace(line); strings.HasPrefix(line, "{") {
		var raw map[string]any
		_ = json.Unmarshal([]byte(line), &raw)
		for k, v := range raw {
			switch v := v.(type) {
			case string:
				out[k] = v
			case float64:
				out[k] = strconv.FormatFloat(v, 'f', -1, 64)
			}
		}
		return out
	}
	for line != "" {
		key, rest, ok := strings.Cut(line, "=")
		if !ok {
			break
		}
		val, next, _ := strings.Cut(rest, " ")
		if q, err := strconv.QuotedPrefix(rest); err == nil {
			val, _ = strconv.Unquote(q)
			next = rest[len(q):]
		}
		if _, dup := out[key]; !dup {
			out[key] = val
		}
		line = strings.TrimLeft(next, " ")
	}
	return out
}
