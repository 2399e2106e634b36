//go:build duckdb_arrow

package file_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/cqrs-spice/cqrs/internal/position"
	"github.com/cqrs-spice/cqrs/internal/runtime/connector/file"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// write creates name under dir with content and returns its path.
func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeParquet makes a Parquet file with DuckDB (a scratch instance of the test).
func writeParquet(t *testing.T, path, query string) {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf("COPY (%s) TO '%s' (FORMAT parquet)", query, path)); err != nil {
		t.Fatal(err)
	}
}

// scan opens a source for from and params in dir and returns its rows as
// "col=value ..." lines and the position.
func scan(t *testing.T, dir, from string, params map[string]string, req engine.ScanRequest) ([]string, position.LSN) {
	t.Helper()
	cfg, err := file.ParseParams(from, params, nil, spicepod.Paths{Dir: dir})
	if err != nil {
		t.Fatalf("ParseParams(%s): %v", from, err)
	}
	src := file.NewSource(cfg)
	if err := src.Open(context.Background()); err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer src.Close()
	return scanSource(t, src, req)
}

func scanSource(t *testing.T, src engine.Source, req engine.ScanRequest) ([]string, position.LSN) {
	t.Helper()
	var rows []string
	var pos position.LSN
	err := src.Scan(context.Background(), req, func(s engine.Snapshot) error {
		pos = s.Position
		for s.Reader.Next() {
			rec := s.Reader.RecordBatch()
			for r := 0; r < int(rec.NumRows()); r++ {
				var cells []string
				for c := 0; c < int(rec.NumCols()); c++ {
					v := "null"
					if !rec.Column(c).IsNull(r) {
						v = rec.Column(c).ValueStr(r)
					}
					cells = append(cells, rec.ColumnName(c)+"="+v)
				}
				rows = append(rows, strings.Join(cells, " "))
			}
		}
		return s.Reader.Err()
	})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return rows, pos
}

func TestReadFormats(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "data/orders.csv", "id,product,count\n1,Laptop,10\n2,\"Phone, large\",20\n")
	write(t, dir, "semi.txt", "id;name\n1;'a;b'\n")
	write(t, dir, "noheader.csv", "1,x\n2,y\n")
	write(t, dir, "rows.jsonl", `{"id": 1, "name": "a"}`+"\n"+`{"id": 2, "name": "b"}`+"\n")
	write(t, dir, "array.json", `[{"id": 1, "name": "a"}]`)
	writeParquet(t, filepath.Join(dir, "p.parquet"), "SELECT 1 AS id, 'one' AS name UNION ALL SELECT 2, 'two'")
	write(t, dir, "parts/a.csv", "id\n1\n")
	write(t, dir, "parts/sub/b.csv", "id\n2\n")
	write(t, dir, "parts/ignored.txt", "not csv")
	for _, tc := range []struct {
		name   string
		from   string
		params map[string]string
		req    engine.ScanRequest
		want   []string
	}{
		{name: "csv relative, quoted comma", from: "data/orders.csv",
			want: []string{"id=1 product=Laptop count=10", "id=2 product=Phone, large count=20"}},
		{name: "file:// relative", from: "//data/orders.csv", req: engine.ScanRequest{Columns: []string{"product"}, Where: "count > 15"},
			want: []string{"product=Phone, large"}},
		{name: "file:/// absolute", from: "//" + filepath.Join(dir, "data/orders.csv"), req: engine.ScanRequest{Since: &engine.Bound{Column: "id", Value: int64(2)}},
			want: []string{"id=2 product=Phone, large count=20"}},
		{name: "csv delimiter and quote", from: "semi.txt", params: map[string]string{"file_format": "csv", "csv_delimiter": ";", "csv_quote": "'"},
			want: []string{"id=1 name=a;b"}},
		{name: "csv without header", from: "noheader.csv", params: map[string]string{"csv_has_header": "false"},
			want: []string{"column0=1 column1=x", "column0=2 column1=y"}},
		{name: "jsonl", from: "rows.jsonl", want: []string{"id=1 name=a", "id=2 name=b"}},
		{name: "json array", from: "array.json", params: map[string]string{"json_format": "array"}, want: []string{"id=1 name=a"}},
		{name: "parquet", from: "p.parquet", want: []string{"id=1 name=one", "id=2 name=two"}},
		{name: "directory", from: "parts", params: map[string]string{"file_format": "csv"}, want: []string{"id=1", "id=2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, pos := scan(t, dir, tc.from, tc.params, tc.req)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("rows = %q, want %q", got, tc.want)
			}
			if pos.IsZero() {
				t.Error("position is zero; want one from the file's modification time")
			}
		})
	}
}

func TestParamErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.csv", "id\n1\n")
	write(t, dir, "a.dat", "id\n1\n")
	writeParquet(t, filepath.Join(dir, "p.parquet"), "SELECT 1 AS id")
	for _, tc := range []struct {
		name   string
		from   string
		params map[string]string
		accel  map[string]string
		want   []string
	}{
		{name: "missing file", from: "nope.csv", want: []string{filepath.Join(dir, "nope.csv"), "does not exist", dir}},
		{name: "unknown param", from: "a.csv", params: map[string]string{"csv_header": "true"}, want: []string{"csv_header", "unknown to the file connector", "csv_has_header"}},
		{name: "bad format", from: "a.csv", params: map[string]string{"file_format": "xlsx"}, want: []string{"file_format", "xlsx", "csv, parquet, json"}},
		{name: "unknown extension", from: "a.dat", want: []string{"file_format is required", "a.dat"}},
		{name: "directory without format", from: ".", want: []string{"file_format is required", "directory"}},
		{name: "csv param on parquet", from: "p.parquet", params: map[string]string{"csv_delimiter": ";"}, want: []string{"csv_delimiter", "csv files", "parquet"}},
		{name: "delimiter of two characters", from: "a.csv", params: map[string]string{"csv_delimiter": ";;"}, want: []string{"csv_delimiter", "one character"}},
		{name: "bad header flag", from: "a.csv", params: map[string]string{"csv_has_header": "yes please"}, want: []string{"csv_has_header", "true or false"}},
		{name: "bad json_format", from: "a.csv", params: map[string]string{"file_format": "json", "json_format": "xml"}, want: []string{"json_format", "array, ndjson, jsonl"}},
		{name: "bad sample size", from: "a.csv", params: map[string]string{"csv_schema_infer_max_records": "-1"}, want: []string{"csv_schema_infer_max_records", "positive"}},
		{name: "refused upstream param", from: "a.csv", params: map[string]string{"schema_source_path": "x"}, want: []string{"schema_source_path", "not supported"}},
		{name: "bad file_watcher", from: "a.csv", accel: map[string]string{"file_watcher": "on"}, want: []string{"file_watcher", "enabled, disabled"}},
		{name: "empty path", from: "//", want: []string{"names no file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := file.ParseParams(tc.from, tc.params, tc.accel, spicepod.Paths{Dir: dir})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// A parse error in the file surfaces at Open, naming the file and the params to
// check.
func TestOpenReportsUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "bad.parquet", "this is not parquet")
	cfg, err := file.ParseParams("bad.parquet", nil, nil, spicepod.Paths{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	src := file.NewSource(cfg)
	defer src.Close()
	err = src.Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "bad.parquet")) || !strings.Contains(err.Error(), "file_format") {
		t.Fatalf("Open = %v, want an error naming the file and file_format", err)
	}
}

// The position grows when the file changes, and stays while it does not.
func TestPositionFollowsChanges(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "a.csv", "id\n1\n")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	cfg, err := file.ParseParams("a.csv", nil, nil, spicepod.Paths{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	src := file.NewSource(cfg)
	if err := src.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	_, p1 := scanSource(t, src, engine.ScanRequest{})
	_, p2 := scanSource(t, src, engine.ScanRequest{})
	if p1 != p2 {
		t.Fatalf("unchanged file: positions %s then %s", p1, p2)
	}
	// A rewrite that keeps an older modification time still moves the position on.
	write(t, dir, "a.csv", "id\n1\n2\n")
	older := old.Add(-time.Hour)
	if err := os.Chtimes(p, older, older); err != nil {
		t.Fatal(err)
	}
	rows, p3 := scanSource(t, src, engine.ScanRequest{})
	if p3 <= p2 || len(rows) != 2 {
		t.Fatalf("after a change: position %s (was %s), rows %q", p3, p2, rows)
	}
}

// The connector's DuckDB reads only the dataset's file: another path is refused.
func TestReadsOnlyItsFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.csv", "id\n1\n")
	secret := write(t, dir, "secret.csv", "pw\nhunter2\n")
	cfg, err := file.ParseParams("a.csv", nil, nil, spicepod.Paths{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	src := file.NewSource(cfg)
	if err := src.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	// refresh_sql's WHERE is the only text a spicepod adds to the connector's SQL.
	err = src.Scan(context.Background(), engine.ScanRequest{Where: fmt.Sprintf("id IN (SELECT 1 FROM read_csv('%s'))", secret)}, func(engine.Snapshot) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "disabled by configuration") {
		t.Fatalf("reading another file: %v, want a permission error", err)
	}
}
