package file

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/duckdbsrc"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// Dataset params this connector reads, as upstream names them.
const (
	ParamFileFormat            = "file_format"
	ParamHivePartitioning      = "hive_partitioning_enabled"
	ParamCSVHasHeader          = "csv_has_header"
	ParamCSVDelimiter          = "csv_delimiter"
	ParamCSVQuote              = "csv_quote"
	ParamCSVEscape             = "csv_escape"
	ParamCSVSchemaInferRecords = "csv_schema_infer_max_records"
	ParamJSONFormat            = "json_format"
	// ParamFileWatcher is an acceleration param: enabled refreshes the dataset
	// when the file changes.
	ParamFileWatcher = "file_watcher"
)

// Formats.
const (
	FormatCSV     = "csv"
	FormatParquet = "parquet"
	FormatJSON    = "json"
)

var (
	knownParams = []string{
		ParamFileFormat, ParamHivePartitioning, ParamCSVHasHeader, ParamCSVDelimiter, ParamCSVQuote,
		ParamCSVEscape, ParamCSVSchemaInferRecords, ParamJSONFormat,
	}
	formats = []string{FormatCSV, FormatParquet, FormatJSON}
	// extensions maps file name endings to formats, for file_format's default
	// and for choosing the files of a directory.
	extensions = map[string]string{
		".csv": FormatCSV, ".parquet": FormatParquet, ".json": FormatJSON,
		".jsonl": FormatJSON, ".ndjson": FormatJSON,
	}
	// refusedParams are upstream params this connector does not serve.
	refusedParams = map[string]string{
		"schema_source_path": "the schema is inferred from every file read; remove it",
	}
)

// Config is a file dataset's settings, built by ParseParams.
type Config struct {
	// Path is the absolute path of the file or directory, symlinks resolved.
	Path string
	// Paths confines what the dataset reads to the spicepod's folders;
	// Files checks every file again.
	Paths spicepod.Paths
	// Dir is true when Path is a directory: every file in it (recursively) whose
	// extension matches Format is read.
	Dir    bool
	Format string
	Hive   bool
	// CSV: HasHeader defaults to true; empty strings and zero keep DuckDB's
	// detection.
	HasHeader  bool
	Delimiter  string
	Quote      string
	Escape     string
	SampleSize int
	// JSONFormat is "array", "newline_delimited" or "auto" (DuckDB's names).
	JSONFormat string
	// Watch is acceleration.params.file_watcher: enabled.
	Watch bool
}

// Location turns the path of from: file:<path> into a file path: file:///abs and
// file:/abs are absolute, file://rel and file:rel are relative (to the spicepod).
func Location(path string) string {
	return strings.TrimPrefix(path, "//")
}

// ParseParams validates a file dataset: path is from: without "file:", params the
// dataset's params, accel the acceleration's params (nil when none), paths the
// spicepod's directory and the folders it may read.
func ParseParams(path string, params, accel map[string]string, paths spicepod.Paths) (Config, error) {
	for k, why := range refusedParams {
		if _, ok := params[k]; ok {
			return Config{}, fmt.Errorf("param %s is not supported by this runtime: %s", k, why)
		}
	}
	if err := duckdbsrc.CheckParams(params, "file", knownParams); err != nil {
		return Config{}, err
	}
	loc := strings.TrimSpace(Location(path))
	if loc == "" {
		return Config{}, fmt.Errorf("from: file:%s names no file; write file:<path>, relative to the spicepod's directory %s", path, paths.Dir)
	}
	abs, err := paths.Resolve("from: file:"+path, loc)
	if err != nil {
		return Config{}, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return Config{}, fmt.Errorf("from: file:%s: %w", path, err)
	}
	c := Config{Path: abs, Paths: paths, Dir: fi.IsDir(), HasHeader: true, JSONFormat: "auto"}
	if c.Format, err = format(params[ParamFileFormat], abs, c.Dir); err != nil {
		return Config{}, err
	}
	if c.Hive, err = boolean(params, ParamHivePartitioning, false); err != nil {
		return Config{}, err
	}
	if err := c.formatParams(params); err != nil {
		return Config{}, err
	}
	switch w := accel[ParamFileWatcher]; w {
	case "", "disabled":
	case "enabled":
		c.Watch = true
	default:
		return Config{}, fmt.Errorf("acceleration param %s: %q is not one of enabled, disabled", ParamFileWatcher, w)
	}
	return c, nil
}

// format is file_format, else the one the extension tells.
func format(param, path string, isDir bool) (string, error) {
	if f := strings.ToLower(strings.TrimSpace(param)); f != "" {
		if !contains(formats, f) {
			return "", fmt.Errorf("param %s: %q is not one of %s", ParamFileFormat, param, strings.Join(formats, ", "))
		}
		return f, nil
	}
	if f, ok := extensions[strings.ToLower(filepath.Ext(path))]; ok && !isDir {
		return f, nil
	}
	what := "the extension of " + path + " does not tell the format"
	if isDir {
		what = path + " is a directory"
	}
	return "", fmt.Errorf("param %s is required: %s; write file_format: csv, parquet or json", ParamFileFormat, what)
}

// formatParams reads the csv_ and json_ params, which only their format takes.
func (c *Config) formatParams(params map[string]string) error {
	for k := range params {
		if strings.HasPrefix(k, "csv_") && c.Format != FormatCSV || strings.HasPrefix(k, "json_") && c.Format != FormatJSON {
			return fmt.Errorf("param %s applies to %s files; this dataset reads %s", k, strings.SplitN(k, "_", 2)[0], c.Format)
		}
	}
	var err error
	if c.HasHeader, err = boolean(params, ParamCSVHasHeader, true); err != nil {
		return err
	}
	for _, p := range []struct {
		name string
		dst  *string
	}{{ParamCSVDelimiter, &c.Delimiter}, {ParamCSVQuote, &c.Quote}, {ParamCSVEscape, &c.Escape}} {
		v, ok := params[p.name]
		if !ok {
			continue
		}
		if len([]rune(v)) != 1 {
			return fmt.Errorf("param %s: %q must be one character", p.name, v)
		}
		*p.dst = v
	}
	if v, ok := params[ParamCSVSchemaInferRecords]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return fmt.Errorf("param %s: %q is not a positive number of records", ParamCSVSchemaInferRecords, v)
		}
		c.SampleSize = n
	}
	switch v := params[ParamJSONFormat]; v {
	case "":
	case "array":
		c.JSONFormat = "array"
	case "ndjson", "jsonl":
		c.JSONFormat = "newline_delimited"
	default:
		return fmt.Errorf("param %s: %q is not one of array, ndjson, jsonl", ParamJSONFormat, v)
	}
	return nil
}

func boolean(params map[string]string, name string, def bool) (bool, error) {
	v, ok := params[name]
	if !ok {
		return def, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, fmt.Errorf("param %s: %q is not true or false", name, v)
	}
	return b, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Files lists what the dataset reads now: the file, or the directory's files of
// the format (hidden ones and symlinks skipped), sorted. Each is checked again
// against Paths: a symlink put in a path's place since ParseParams must not
// lead outside the spicepod's folders.
func (c Config) Files() ([]string, error) {
	if err := c.confined(c.Path); err != nil {
		return nil, err
	}
	if !c.Dir {
		return []string{c.Path}, nil
	}
	var out []string
	err := filepath.WalkDir(c.Path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != c.Path {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && extensions[strings.ToLower(filepath.Ext(p))] == c.Format {
			if err := c.confined(p); err != nil {
				return err
			}
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", c.Path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("directory %s holds no %s files", c.Path, c.Format)
	}
	sort.Strings(out)
	return out, nil
}

// confined checks that path resolves to itself within Paths.
func (c Config) confined(path string) error {
	if c.Paths.Dir == "" {
		return nil
	}
	real, err := c.Paths.Resolve("from: file:", path)
	if err != nil {
		return err
	}
	if real != path {
		return fmt.Errorf("from: file: %s is now a link to %s; name the file itself", path, real)
	}
	return nil
}

// Relation renders the DuckDB table function call that reads files.
func (c Config) Relation(files []string) string {
	q := make([]string, len(files))
	for i, f := range files {
		q[i] = duckdbsrc.Quote(f)
	}
	args := []string{"[" + strings.Join(q, ", ") + "]"}
	opt := func(name, value string) { args = append(args, name+" = "+value) }
	if c.Hive {
		opt("hive_partitioning", "true")
	}
	switch c.Format {
	case FormatCSV:
		opt("header", strconv.FormatBool(c.HasHeader))
		if c.Delimiter != "" {
			opt("delim", duckdbsrc.Quote(c.Delimiter))
		}
		if c.Quote != "" {
			opt("quote", duckdbsrc.Quote(c.Quote))
		}
		if c.Escape != "" {
			opt("escape", duckdbsrc.Quote(c.Escape))
		}
		if c.SampleSize > 0 {
			opt("sample_size", strconv.Itoa(c.SampleSize))
		}
		return "read_csv(" + strings.Join(args, ", ") + ")"
	case FormatJSON:
		opt("format", duckdbsrc.Quote(c.JSONFormat))
		return "read_json(" + strings.Join(args, ", ") + ")"
	default:
		return "read_parquet(" + strings.Join(args, ", ") + ")"
	}
}
