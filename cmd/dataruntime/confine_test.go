//go:build duckdb_arrow

package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
)

// runtimeAllowing is runtimeIn with --allowed-paths.
func runtimeAllowing(tb testing.TB, dir, pod string, allowed ...string) (*runtime, error) {
	tb.Helper()
	path := filepath.Join(dir, "spicepod.yaml")
	if err := os.WriteFile(path, []byte(pod), 0o644); err != nil {
		tb.Fatal(err)
	}
	cfg := Config{Spicepod: path, HTTPAddr: "127.0.0.1:0", FlightAddr: "127.0.0.1:0", DataDir: dir,
		MinPositionTimeout: 2 * time.Second, AllowedPaths: allowed}
	m := NewMain(cfg, slog.New(slog.NewTextHandler(testWriter{tb}, &slog.HandlerOptions{Level: slog.LevelInfo})))
	tb.Cleanup(func() { m.Close() })
	if err := m.Run(context.Background()); err != nil {
		return nil, err
	}
	return &runtime{Main: m, url: "http://" + m.HTTP.Addr()}, nil
}

func symlink(tb testing.TB, target, link string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		tb.Fatal(err)
	}
}

// A spicepod reads files in its own folder only, symlinks resolved: a file
// outside it, named absolutely, relatively or through a link inside the
// folder, stops the start with the path and what to do; the runtime's
// --allowed-paths widens the folder.
func TestSpicepodFilesAreConfinedToItsFolder(t *testing.T) {
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.csv"), "secret\nhunter2\n")
	writeFile(t, filepath.Join(outside, "view.sql"), "select 1 as one")
	duckdbExec(t, filepath.Join(outside, "other.duckdb"), "CREATE TABLE t AS SELECT 'hunter2' AS secret")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data", "ok.csv"), "secret\nvisible\n")
	symlink(t, filepath.Join(outside, "secret.csv"), filepath.Join(dir, "link.csv"))
	symlink(t, outside, filepath.Join(dir, "linkdir"))
	symlink(t, filepath.Join(outside, "secret.csv"), filepath.Join(dir, "data", "linked.csv"))
	symlink(t, filepath.Join(outside, "view.sql"), filepath.Join(dir, "view.sql"))
	rel, err := filepath.Rel(dir, filepath.Join(outside, "secret.csv"))
	if err != nil {
		t.Fatal(err)
	}
	pod := func(datasets string) string {
		return "version: v1\nkind: Spicepod\nname: confined\ndatasets:\n" + datasets
	}
	for _, tc := range []struct{ name, pod string }{
		{"absolute path", pod("  - {from: 'file:" + filepath.Join(outside, "secret.csv") + "', name: s}\n")},
		{"relative path", pod("  - {from: 'file:" + rel + "', name: s}\n")},
		{"symlink in the folder", pod("  - {from: 'file:link.csv', name: s}\n")},
		{"through a linked directory", pod("  - {from: 'file:linkdir/secret.csv', name: s}\n")},
		{"duckdb file", pod("  - {from: 'duckdb:t', name: s, params: {duckdb_open: '" + filepath.Join(outside, "other.duckdb") + "'}}\n")},
		{"sql_ref", pod("  - {from: 'file:data/ok.csv', name: ok}\nviews:\n  - {name: v, sql_ref: view.sql}\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runtimeAllowing(t, dir, tc.pod)
			if err == nil {
				t.Fatal("the runtime started")
			}
			for _, want := range []string{"outside the spicepod's folder", dir, "--allowed-paths"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}

	// A directory dataset skips links: only the folder's own file is served.
	r, err := runtimeAllowing(t, dir, pod("  - {from: 'file:data/', name: d, params: {file_format: csv}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	r.waitReady(t)
	if a := r.query(t, "select secret as name, null as count from d", 0); a.code != 200 || strings.Contains(a.body, "hunter2") || !strings.Contains(a.body, "visible") {
		t.Fatalf("directory dataset: %d %s, want the folder's row only", a.code, a.body)
	}

	// --allowed-paths lets the operator widen the folder.
	other := t.TempDir()
	r, err = runtimeAllowing(t, other, pod("  - {from: 'file:"+filepath.Join(outside, "secret.csv")+"', name: s}\n"), outside)
	if err != nil {
		t.Fatalf("with --allowed-paths %s: %v", outside, err)
	}
	r.waitReady(t)
	if a := r.query(t, "select secret as name, null as count from s", 0); a.code != 200 || !strings.Contains(a.body, "hunter2") {
		t.Fatalf("allowed file: %d %s", a.code, a.body)
	}
}

// A duckdb: dataset never opens a data runtime's store, even in the
// spicepod's folder: another runtime's tables and its _spice bookkeeping are
// not data to serve.
func TestDuckDBDatasetRefusesARuntimeStore(t *testing.T) {
	dir := t.TempDir()
	store := duckdb.New(filepath.Join(dir, "other.duckdb"))
	if err := store.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	store.Close()
	for _, table := range []string{"_spice.watermarks", "main._spice_anything"} {
		_, err := runtimeAllowing(t, dir, "version: v1\nkind: Spicepod\nname: reader\ndatasets:\n"+
			"  - {from: 'duckdb:"+table+"', name: w, params: {duckdb_open: other.duckdb}}\n")
		if err == nil || !strings.Contains(err.Error(), "a data runtime's store") {
			t.Fatalf("duckdb:%s of a runtime's store: %v, want a refusal naming it", table, err)
		}
	}
}

// A view is held to the rules of user queries: it is read with users' keys.
func TestViewsPassTheQueryGuard(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.csv"), "id\n1\n")
	for _, tc := range []struct{ name, sql, want string }{
		{"settings", "select * from duckdb_settings()", "duckdb_settings"},
		{"bookkeeping", "select * from _spice.watermarks", "_spice.watermarks"},
		{"database file", "select * from pragma_database_list", "pragma_database_list"},
		{"file function", "select * from read_text('/etc/hostname')", "read_text"},
		{"current setting", "select current_setting('memory_limit') as m", "current_setting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runtimeAllowing(t, dir, "version: v1\nkind: Spicepod\nname: views\ndatasets:\n"+
				"  - {from: 'file:a.csv', name: a}\nviews:\n  - name: v\n    sql: \""+tc.sql+"\"\n")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "query refused") {
				t.Fatalf("view %q: %v, want it refused naming %q", tc.sql, err, tc.want)
			}
		})
	}
}
