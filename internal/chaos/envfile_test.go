package chaos_test

import (
	"os"
	"path/filepath"
	"strings"
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

func TestCheckSecrets(t *testing.T) {
	for _, tt := range []struct {
		name, file string
		want       string // empty: no error
	}{
		{"complete", "ACCELERATED_API_KEY=a\nMATERIALIZED_API_KEY=b\nPOSTGRES_PASSWORD=c\n", ""},
		{"older checkout", "ACCELERATED_API_KEY=a\nMATERIALIZED_API_KEY=b\n", "lacks POSTGRES_PASSWORD: run make secrets"},
		{"empty value", "ACCELERATED_API_KEY=\nMATERIALIZED_API_KEY=b\nPOSTGRES_PASSWORD=c\n", "lacks ACCELERATED_API_KEY"},
		{"no file", "", "run make secrets"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.file != "" {
				if err := os.WriteFile(filepath.Join(dir, "secrets.env"), []byte(tt.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := chaos.CheckSecrets(dir)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("CheckSecrets: %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("CheckSecrets: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
