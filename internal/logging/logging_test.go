package logging_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/logging"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in      string
		level   slog.Level
		wantErr bool
	}{
		{"debug", slog.LevelDebug, false}, {"INFO", slog.LevelInfo, false}, {" warn ", slog.LevelWarn, false},
		{"error", slog.LevelError, false}, {"debug+2", slog.LevelDebug + 2, false}, {"verbose", 0, true}, {"", 0, true},
	} {
		l, err := logging.ParseLevel(tt.in)
		if (err != nil) != tt.wantErr || (!tt.wantErr && l != tt.level) {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v, error %v", tt.in, l, err, tt.level, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), logging.Levels) {
			t.Errorf("ParseLevel(%q) error %q does not name the valid levels", tt.in, err)
		}
	}
	for in, want := range map[string]string{"text": "text", "JSON": "json", "logfmt": "", "": ""} {
		got, err := logging.ParseFormat(in)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestNew: json writes one JSON object a line, text does not; records below
// the level are dropped.
func TestNew(t *testing.T) {
	var b bytes.Buffer
	logging.New(slog.LevelInfo, "json", &b).Info("hello", "n", 1)
	if got := b.String(); !strings.HasPrefix(got, "{") || !strings.Contains(got, `"msg":"hello"`) {
		t.Fatalf("json log=%q, want a JSON line", got)
	}
	b.Reset()
	l := logging.New(slog.LevelWarn, "text", &b)
	l.Info("hidden")
	l.Warn("shown")
	if got := b.String(); strings.Contains(got, "hidden") || !strings.Contains(got, "msg=shown") {
		t.Fatalf("text log=%q, want only the warning, as text", got)
	}
}
