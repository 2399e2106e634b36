package main_test

import (
	"os"
	"path/filepath"
	"testing"

	main "github.com/cqrs-spice/cqrs/cmd/api"
)

// TestPostgresConfig_Password: which password a connection string gets, and
// from where, for every source and with libpq's variables set around it.
func TestPostgresConfig_Password(t *testing.T) {
	passfile := filepath.Join(t.TempDir(), "pgpass")
	if err := os.WriteFile(passfile, []byte("db.example:5432:*:app:from-passfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, url, setting, pgpassword, passfile string
		want, source                             string
	}{
		{"URL's own", "postgres://app:own@db.example/shop", "setting", "env", "", "own", main.PasswordFromURL},
		{"URL's parameter", "postgres://app@db.example/shop?password=own", "setting", "env", "", "own", main.PasswordFromURL},
		{"keyword's own", "host=db.example user=app password='o wn'", "setting", "env", "", "o wn", main.PasswordFromURL},
		{"setting over PGPASSWORD", "postgres://app@db.example/shop", "setting", "env", "", "setting", main.PasswordFromSetting},
		{"setting, keywords", "host=db.example user=app dbname=shop", "setting", "env", "", "setting", main.PasswordFromSetting},
		{"empty URL password", "postgres://app:@db.example/shop", "setting", "", "", "setting", main.PasswordFromSetting},
		{"a user named password", "postgres://password@db.example/shop", "setting", "", "", "setting", main.PasswordFromSetting},
		{"PGPASSWORD", "postgres://app@db.example/shop", "", "env", "", "env", main.PasswordFromEnv},
		{"passfile", "postgres://app@db.example:5432/shop", "", "", passfile, "from-passfile", main.PasswordFromPassfile},
		{"none", "postgres://app@db.example/shop", "", "", "", "", main.PasswordNone},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PGPASSWORD", tt.pgpassword)
			t.Setenv("PGPASSFILE", tt.passfile)
			pcfg, source, err := main.PostgresConfig(tt.url, tt.setting)
			if err != nil {
				t.Fatal(err)
			}
			if got := pcfg.ConnConfig.Password; got != tt.want {
				t.Errorf("password %q, want %q", got, tt.want)
			}
			if source != tt.source {
				t.Errorf("source %q, want %q", source, tt.source)
			}
		})
	}
}
