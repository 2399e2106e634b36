package spicepod_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// FuzzParse feeds Parse arbitrary files: it must return a pod or an error
// matching ErrInvalid, never panic, hang or exhaust the stack. Seeds are the
// valid fixtures, the invalid ones and the hostile documents of limits_test.go.
// Run with `make fuzz` or `go test -fuzz=FuzzParse ./internal/runtime/spicepod/`.
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"valid", "invalid"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	for _, tt := range hostilePods {
		f.Add([]byte(tt.doc))
	}
	f.Add([]byte(hostileHead + "views:\n  - name: v\n    sql: select 1 as a; create table pwn as select 42 as y\n"))
	name := filepath.Join(f.TempDir(), "spicepod.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		pod, err := spicepod.Parse(data, name, lookup)
		switch {
		case err != nil && !errors.Is(err, spicepod.ErrInvalid):
			t.Fatalf("error %q does not match ErrInvalid", err)
		case err == nil && pod == nil:
			t.Fatal("Parse returned neither a pod nor an error")
		}
	})
}
