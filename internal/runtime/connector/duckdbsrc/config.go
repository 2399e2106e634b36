package duckdbsrc

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// ParamOpen is the DuckDB database file, as upstream names it.
const ParamOpen = "duckdb_open"

var knownParams = []string{ParamOpen}

// Config is a duckdb dataset's settings, built by ParseParams.
type Config struct {
	// Path is the absolute path of the database file, symlinks resolved.
	Path string
	// Paths confines the file to the spicepod's folder (checked again at
	// every read).
	Paths spicepod.Paths
	// param is duckdb_open as written, for errors.
	param string
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

// ParseParams validates a dataset's params; paths confine duckdb_open, which
// is resolved against the spicepod's directory, to the folders the spicepod
// may read (spicepod.Paths).
func ParseParams(params map[string]string, paths spicepod.Paths) (Config, error) {
	if err := CheckParams(params, "duckdb", knownParams); err != nil {
		return Config{}, err
	}
	p := strings.TrimSpace(params[ParamOpen])
	if p == "" {
		return Config{}, fmt.Errorf("param %s is required; write the path of the DuckDB database file (relative to the spicepod's directory %s)", ParamOpen, paths.Dir)
	}
	abs, err := paths.Resolve("param "+ParamOpen, p)
	if err != nil {
		return Config{}, err
	}
	return Config{Path: abs, Paths: paths, param: p}, nil
}

// resolve checks the file again: a symlink put in its place since ParseParams
// must not lead outside the spicepod's folders.
func (c Config) resolve() (string, error) {
	if c.Paths.Dir == "" {
		return c.Path, nil
	}
	real, err := c.Paths.Resolve("param "+ParamOpen, c.Path)
	if err != nil {
		return "", err
	}
	if real != c.Path {
		return "", fmt.Errorf("param %s: %s is now a link to %s; point duckdb_open at the file itself", ParamOpen, c.Path, real)
	}
	return real, nil
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
