package spicepod_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

func TestParseDuration(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    time.Duration
		wantErr string // substring; "" means success
	}{
		{"10s", 10 * time.Second, ""},
		{"500ms", 500 * time.Millisecond, ""},
		{"1m", time.Minute, ""},
		{"1h", time.Hour, ""},
		{"1d", 24 * time.Hour, ""},
		{"2w", 14 * 24 * time.Hour, ""},
		{"1.5m", 90 * time.Second, ""},
		{".5s", 500 * time.Millisecond, ""},
		{"10", 10 * time.Second, ""},
		{"0.25", 250 * time.Millisecond, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"1d12h", 36 * time.Hour, ""},
		{"250us", 250 * time.Microsecond, ""},
		{"250µs", 250 * time.Microsecond, ""},
		{"3Ms", 3 * time.Microsecond, ""},
		{"7ns", 7, ""},
		{" 10s ", 10 * time.Second, ""},
		{"0s", 0, ""},
		{"", 0, "empty"},
		{"10 seconds", 0, "unknown unit"},
		{"10x", 0, "unknown unit"},
		{"s", 0, "unknown unit"},
		{"-5s", 0, "negative"},
		{"1e3s", 0, "unknown unit"},
		{"1y", 0, "unknown unit"},
		{"999999999999d", 0, "too large"},
	} {
		got, err := spicepod.ParseDuration(tt.in)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ParseDuration(%q): %v", tt.in, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseDuration(%q) = %v, %v, want error containing %q", tt.in, got, err, tt.wantErr)
		case got != tt.want:
			t.Errorf("ParseDuration(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseByteSize(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"128MiB", 128 << 20, ""},
		{"1GiB", 1 << 30, ""},
		{"512MB", 512_000_000, ""},
		{"512mb", 512_000_000, ""},
		{"1048576", 1 << 20, ""},
		{"64 KiB", 64 << 10, ""},
		{"2k", 2000, ""},
		{"1.5GiB", 3 << 29, ""},
		{"10B", 10, ""},
		{"1TiB", 1 << 40, ""},
		{"0", 0, ""},
		{"", 0, "not a number"},
		{"lots", 0, "not a number"},
		{"-1MiB", 0, "negative"},
		{"12XB", 0, `unknown unit "XB"`},
		{"99999999PiB", 0, "too large"},
	} {
		got, err := spicepod.ParseByteSize(tt.in)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ParseByteSize(%q): %v", tt.in, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseByteSize(%q) = %d, %v, want error containing %q", tt.in, got, err, tt.wantErr)
		case got != tt.want:
			t.Errorf("ParseByteSize(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
