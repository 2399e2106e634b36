package bench_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/bench"
)

// fakeDocker writes a docker CLI that names each service's container
// p_<service>_1, logs every other command, fails the first pause with the
// freezer's error and answers unpause of accelerated as not paused.
func fakeDocker(t *testing.T) (cli, log string) {
	t.Helper()
	dir := t.TempDir()
	cli, log = filepath.Join(dir, "docker"), filepath.Join(dir, "log")
	script := `#!/bin/sh
if [ "$1" = ps ]; then
  for a in "$@"; do case "$a" in label=com.docker.compose.service=*) echo "p_${a##*=}_1";; esac; done
  exit 0
fi
echo "$*" >> ` + log + `
if [ "$1" = pause ] && [ ! -f ` + dir + `/froze ]; then touch ` + dir + `/froze; echo "unable to freeze: unknown" >&2; exit 1; fi
if [ "$1" = unpause ] && [ "$2" = p_accelerated_1 ]; then echo "Container p_accelerated_1 is not paused" >&2; exit 1; fi
exit 0
`
	if err := os.WriteFile(cli, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return cli, log
}

func TestDockerRuntimes(t *testing.T) {
	cli, log := fakeDocker(t)
	d := &bench.DockerRuntimes{Docker: cli, Project: "p", Services: []string{"accelerated", "materialized"}}
	ctx := context.Background()
	if err := d.Off(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.On(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// Runtime 2 first on the way off, once more after the freezer failed;
	// runtime 1 first on the way on, its "not paused" no error.
	want := "pause p_materialized_1\npause p_materialized_1\npause p_accelerated_1\nunpause p_accelerated_1\nunpause p_materialized_1\n"
	if got := string(b); got != want {
		t.Fatalf("docker ran:\n%s\nwant:\n%s", got, want)
	}
	d.Mode = bench.RuntimesStop
	if err := d.Off(ctx); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(log)
	if !strings.HasSuffix(string(b), "stop p_materialized_1\nstop p_accelerated_1\n") {
		t.Fatalf("docker ran:\n%s\nwant both stopped, runtime 2 first", b)
	}
	if err := (&bench.DockerRuntimes{Docker: cli, Services: []string{"accelerated"}}).Off(ctx); err == nil {
		t.Fatal("Off without a project: no error")
	}
}
