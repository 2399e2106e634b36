package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// The log settings behave alike in both programs (cmd/dataruntime/log.go is the
// twin of this file): LOG_LEVEL and LOG_FORMAT, an unknown value a startup error
// naming the valid ones.
const (
	logLevels  = "debug, info, warn or error"
	logFormats = "text or json"
)

// parseLogLevel reads a level name in any case ("debug", "INFO"; slog's offsets
// like "debug+2" too).
func parseLogLevel(v string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.TrimSpace(v))); err != nil {
		return 0, fmt.Errorf("want %s", logLevels)
	}
	return l, nil
}

// parseLogFormat reads "text" (logfmt-like lines) or "json" (one object a line).
func parseLogFormat(v string) (string, error) {
	switch f := strings.ToLower(strings.TrimSpace(v)); f {
	case "text", "json":
		return f, nil
	}
	return "", fmt.Errorf("want %s", logFormats)
}

// newLogger writes records at level and above to w in format.
func newLogger(level slog.Level, format string, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
