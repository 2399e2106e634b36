//go:build duckdb_arrow

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDropSlots: drop-slots drops the slot and publication of the instance it
// is given, says so, and fails naming what to check when they do not exist;
// "auto", which only a runtime's own container can resolve, is refused.
func TestDropSlots(t *testing.T) {
	dsn, params := MustDatabase(t, pg.Get(t), recipeSchema)
	pod := strings.ReplaceAll(recipePod(params, "1s"), "refresh_check_interval: 1s", "refresh_mode: changes")
	path := filepath.Join(t.TempDir(), "spicepod.yaml")
	if err := os.WriteFile(path, []byte(pod), 0o644); err != nil {
		t.Fatal(err)
	}
	mustExec(t, dsn, "SELECT pg_create_logical_replication_slot('spice_sample_r1', 'pgoutput')")
	mustExec(t, dsn, "CREATE PUBLICATION spice_sample_r1 FOR TABLE orders, products")
	slots := func() string {
		return pgString(t, dsn, "SELECT coalesce(string_agg(slot_name, ','), '') FROM pg_replication_slots WHERE database = current_database()")
	}
	for _, tt := range []struct {
		name    string
		args    []string
		env     string // SPICE_INSTANCE_ID
		code    int
		want    []string // in stderr
		notWant string
		slots   string // left afterwards
	}{
		{"auto refused", nil, "auto", 2, []string{"--instance-id auto", "--inactive"}, "dropped", "spice_sample_r1"},
		{"another instance", []string{"--instance-id", "r2"}, "", 1,
			[]string{"no slot spice_sample_r2 and no publication spice_sample_r2", "nothing dropped", "--instance-id"}, "dropped slot", "spice_sample_r1"},
		{"its instance, from the environment", nil, "r1", 0,
			[]string{"dropped slot spice_sample_r1", "dropped publication spice_sample_r1"}, "nothing dropped", ""},
		{"again", []string{"--instance-id", "r1"}, "", 1, []string{"nothing dropped"}, "dropped slot", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			getenv := func(k string) string {
				if k == "SPICE_INSTANCE_ID" {
					return tt.env
				}
				return ""
			}
			code := dropSlots(context.Background(), append([]string{"--spicepod", path}, tt.args...), getenv, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			if strings.Contains(stderr.String(), tt.notWant) {
				t.Errorf("stderr says %q:\n%s", tt.notWant, stderr.String())
			}
			if got := slots(); got != tt.slots {
				t.Errorf("slots left %q, want %q", got, tt.slots)
			}
		})
	}
}
