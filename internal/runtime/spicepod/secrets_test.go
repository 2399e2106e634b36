package spicepod_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

func TestUnresolvedSecretHint(t *testing.T) {
	for _, tt := range []struct {
		ref           string
		want, notWant string
	}{
		{"${ secrets:SPICE_PG_PASS }", "set SPICE_PG_PASS in the environment", "SPICE_SPICE_"},
		{"${env:spice_pg_pass}", "set SPICE_PG_PASS in the environment", "SPICE_SPICE_"},
		{"${secrets:pg_pass}", "set SPICE_PG_PASS or PG_PASS in the environment", "SPICE_SPICE_"},
	} {
		pod := "version: v1\nkind: Spicepod\nname: t\ndatasets:\n  - from: postgres:public.orders\n    name: orders\n    params:\n      pg_pass: " + tt.ref + "\n"
		_, err := spicepod.Parse([]byte(pod), "spicepod.yaml", nil)
		if !errors.Is(err, spicepod.ErrUnresolved) {
			t.Fatalf("%s: err = %v, want ErrUnresolved", tt.ref, err)
		}
		if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, tt.notWant) {
			t.Errorf("%s: %q, want it to contain %q and not %q", tt.ref, msg, tt.want, tt.notWant)
		}
	}
}
