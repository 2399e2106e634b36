package duckdbsrc

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// ParamOpen is the DuckDB database file, as upstream names it.
const ParamOpen = "duckdb_open"

var knownParams = []string{ParamOpen}

// Config is a duckdb dataset's settings, built by ParseParams.
type Config struct {
	// Path is the absolute path of the database file.
	Path string
}

// CheckParams refuses every param not in known, naming it and the known ones.
// Connectors whose params share no prefix check them all this way.
func CheckParams(params map[string]string, connector string, known []string) error {
	var unknown []string
	for k := range params {
		if !contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return fmt.Errorf("params %s: unknown to the %s connector; it reads %s", strings.Join(unknown, ", "), connector, strings.Join(known, ", "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ResolvePath makes path absolute against the spicepod's directory dir and checks
// that it exists; the error names the path as written, the resolved one and the
// directory.
func ResolvePath(param, path, dir string) (string, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(dir, path)
	}
	if _, err := os.Stat(abs); err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Errorf("%s: %s does not exist (a relative path is read from the spicepod's directory %s); create it or fix the path", param, abs, dir)
		}
		return "", fmt.Errorf("%s: %w", param, err)
	}
	return abs, nil
}

// ParseParams validates a dataset's params; dir is the spicepod's directory,
// against which a relative duckdb_open is resolved.
func ParseParams(params map[string]string, dir string) (Config, error) {
	if err := CheckParams(params, "duckdb", knownParams); err != nil {
		return Config{}, err
	}
	p := strings.TrimSpace(params[ParamOpen])
	if p == "" {
		return Config{}, fmt.Errorf("param %s is required; write the path of the DuckDB database file (relative to the spicepod's directory %s)", ParamOpen, dir)
	}
	abs, err := ResolvePath("param "+ParamOpen, p, dir)
	if err != nil {
		return Config{}, err
	}
	return Config{Path: abs}, nil
}

// tableName matches one to three dot-separated parts, each a plain identifier or a
// double-quoted one: orders, main.orders, shop.main."Orders".
var tableName = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")(?:\.(?:[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+")){0,2}$`)

var tablePart = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+"`)

// QuoteTable renders a table name CheckTable accepted with every part quoted, so
// that a name such as order or group reads as a name. DuckDB matches quoted
// names without regard to case, as it does unquoted ones.
func QuoteTable(table string) string {
	parts := tablePart.FindAllString(table, -1)
	for i, p := range parts {
		if !strings.HasPrefix(p, `"`) {
			parts[i] = `"` + p + `"`
		}
	}
	return strings.Join(parts, ".")
}

// CheckTable checks the from: path of a duckdb dataset.
func CheckTable(table string) error {
	switch {
	case strings.Contains(table, "("):
		return fmt.Errorf("from: duckdb:%s: DuckDB table functions are not read by this runtime; to read a CSV, Parquet or JSON file write from: file:<path> (with file_format when the extension does not tell)", table)
	case !tableName.MatchString(table):
		return fmt.Errorf("from: duckdb:%s is not a table name; write duckdb:<table>, duckdb:<schema>.<table> or duckdb:<database>.<schema>.<table>", table)
	}
	return nil
}

// Quote renders s as a SQL string literal.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
