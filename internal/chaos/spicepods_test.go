package chaos_test

import (
	"path/filepath"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// TestSpicepodsLoad keeps the chaos faults' spicepods loadable as the runtime's
// spicepod format evolves (they are variants of spicepods/, not copies).
func TestSpicepodsLoad(t *testing.T) {
	env := func(string) (string, bool) { return "1", true }
	files, err := filepath.Glob("../../chaos/spicepods/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no chaos spicepods: %v", err)
	}
	for _, f := range files {
		pod, err := spicepod.Load(f, env)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if !pod.Runtime.Auth.APIKey.Enabled {
			t.Errorf("%s: no runtime.auth: the stack's runtimes require keys, so must its variants", f)
		}
	}
}
