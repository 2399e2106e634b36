package main_test

import (
	"log/slog"
	"testing"

	main "github.com/cqrs-spice/cqrs/cmd/api"
)

// TestLoadConfig_Log: LOG_LEVEL and LOG_FORMAT, as cmd/dataruntime reads them.
func TestLoadConfig_Log(t *testing.T) {
	for _, tt := range []struct {
		level, format string
		wantLevel     slog.Level
		wantFormat    string
		wantErr       string
	}{
		{"", "", slog.LevelInfo, "text", ""},
		{"debug", "json", slog.LevelDebug, "json", ""},
		{"WARN", "JSON", slog.LevelWarn, "json", ""},
		{" error ", "text", slog.LevelError, "text", ""},
		{"info", "", slog.LevelInfo, "text", ""},
		{"verbose", "", 0, "", `LOG_LEVEL="verbose": want debug, info, warn or error`},
		{"warning", "", 0, "", `LOG_LEVEL="warning": want debug, info, warn or error`},
		{"", "logfmt", 0, "", `LOG_FORMAT="logfmt": want text or json`},
	} {
		c, err := main.LoadConfig(env(map[string]string{"LOG_LEVEL": tt.level, "LOG_FORMAT": tt.format}))
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("LOG_LEVEL=%q LOG_FORMAT=%q: err=%v, want %q", tt.level, tt.format, err, tt.wantErr)
			}
			continue
		}
		if err != nil || c.LogLevel != tt.wantLevel || c.LogFormat != tt.wantFormat {
			t.Errorf("LOG_LEVEL=%q LOG_FORMAT=%q: level=%v format=%q err=%v, want %v %q",
				tt.level, tt.format, c.LogLevel, c.LogFormat, err, tt.wantLevel, tt.wantFormat)
		}
	}
}
