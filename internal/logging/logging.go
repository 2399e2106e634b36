// Package logging reads the log settings both programs share (LOG_LEVEL and
// LOG_FORMAT, or the runtime's --log-level and --log-format) and builds the
// slog.Logger they describe. An unknown value is an error naming the valid ones,
// so a typo stops the start instead of silently logging at info.
package logging

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// ErrorKey is the slog attribute key of an error in both programs' logs, so one
// search finds the errors of either.
const ErrorKey = "err"

// The valid values, as help texts and errors name them.
const (
	Levels  = "debug, info, warn or error"
	Formats = "text or json"
)

// ParseLevel reads a level name in any case ("debug", "INFO"; slog's offsets
// like "debug+2" too).
func ParseLevel(v string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.TrimSpace(v))); err != nil {
		return 0, fmt.Errorf("want %s", Levels)
	}
	return l, nil
}

// ParseFormat reads "text" (logfmt-like lines) or "json" (one object a line).
func ParseFormat(v string) (string, error) {
	switch f := strings.ToLower(strings.TrimSpace(v)); f {
	case "text", "json":
		return f, nil
	}
	return "", fmt.Errorf("want %s", Formats)
}

// New writes records at level and above to w in format ("json", else text).
func New(level slog.Level, format string, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
