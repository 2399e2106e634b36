package chaos_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/chaos"
)

func TestReadEnvFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets.env")
	if err := os.WriteFile(path, []byte("# keys\nACCELERATED_API_KEY=abc=\n\n MATERIALIZED_API_KEY = def \nnot a pair\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := chaos.ReadEnvFile(path)
	for k, want := range map[string]string{"ACCELERATED_API_KEY": "abc=", "MATERIALIZED_API_KEY": "def"} {
		if got[k] != want {
			t.Errorf("%s=%q, want %q", k, got[k], want)
		}
	}
	if len(got) != 2 {
		t.Errorf("read %d pairs (%v), want 2", len(got), got)
	}
	if m := chaos.ReadEnvFile(filepath.Join(t.TempDir(), "missing")); len(m) != 0 {
		t.Errorf("missing file read as %v", m)
	}
}
