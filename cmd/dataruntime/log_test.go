//go:build duckdb_arrow

package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestParseFlags_Log: --log-level and --log-format, with LOG_LEVEL and LOG_FORMAT
// as defaults, read as cmd/api reads its variables.
func TestParseFlags_Log(t *testing.T) {
	for _, tt := range []struct {
		name       string
		env        map[string]string
		args       []string
		wantLevel  slog.Level
		wantFormat string
		wantErr    string // in stderr
	}{
		{name: "defaults", wantLevel: slog.LevelInfo, wantFormat: "text"},
		{name: "flags", args: []string{"--log-level", "debug", "--log-format", "json"}, wantLevel: slog.LevelDebug, wantFormat: "json"},
		{name: "any case", args: []string{"--log-level=WARN", "--log-format=JSON"}, wantLevel: slog.LevelWarn, wantFormat: "json"},
		{name: "env", env: map[string]string{"LOG_LEVEL": "error", "LOG_FORMAT": "json"}, wantLevel: slog.LevelError, wantFormat: "json"},
		{name: "flag over env", env: map[string]string{"LOG_LEVEL": "error"}, args: []string{"--log-level", "debug"}, wantLevel: slog.LevelDebug, wantFormat: "text"},
		{name: "bad flag level", args: []string{"--log-level", "verbose"}, wantErr: `invalid value "verbose" for flag -log-level: want debug, info, warn or error`},
		{name: "bad flag format", args: []string{"--log-format", "logfmt"}, wantErr: `invalid value "logfmt" for flag -log-format: want text or json`},
		{name: "bad env level", env: map[string]string{"LOG_LEVEL": "warning"}, wantErr: `LOG_LEVEL="warning": want debug, info, warn or error`},
		{name: "bad env format", env: map[string]string{"LOG_FORMAT": "xml"}, wantErr: `LOG_FORMAT="xml": want text or json`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			cfg, err := parseFlags(tt.args, func(k string) string { return tt.env[k] }, &stderr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(stderr.String(), tt.wantErr) {
					t.Fatalf("err=%v stderr=%q, want an error and %q", err, stderr.String(), tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err=%v stderr=%q", err, stderr.String())
			}
			if cfg.LogLevel != tt.wantLevel || cfg.LogFormat != tt.wantFormat {
				t.Fatalf("level=%v format=%q, want %v %q", cfg.LogLevel, cfg.LogFormat, tt.wantLevel, tt.wantFormat)
			}
		})
	}
}
