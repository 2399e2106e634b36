package spicepod

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Supported values of the top-level version and kind keys.
const (
	VersionV1Beta1 = "v1beta1"
	VersionV1      = "v1"
	KindSpicepod   = "Spicepod"
)

// Upstream defaults, applied by Parse when a key is absent.
const (
	DefaultEngine        = EngineArrow
	DefaultMode          = ModeMemory
	DefaultRefreshMode   = RefreshFull
	DefaultReadyState    = ReadyOnLoad
	DefaultOnZeroResults = ZeroResultsReturnEmpty

	DefaultCacheMaxSize int64         = 128 << 20 // 128 MiB
	DefaultItemTTL      time.Duration = time.Second

	// DefaultJitterFraction is the share of refresh_check_interval used as
	// refresh_jitter_max when jitter is enabled without an explicit maximum.
	DefaultJitterFraction = 0.1
)

// Pod is a parsed and validated spicepod.yaml.
type Pod struct {
	Version string // v1beta1 or v1; required
	Kind    string // always "Spicepod"; required
	Name    string // required, free text

	// Datasets and Views share one namespace of table names (compared case
	// insensitively, as DuckDB does). Both keep the order of the file.
	Datasets []Dataset
	Views    []View

	Runtime Runtime

	// Secrets are the declared secret stores. Empty means the upstream
	// default: a single env store. Only stores with From "env" exist here.
	Secrets []Secret

	// Dir is the absolute directory of the spicepod file; sql_ref paths are
	// resolved against it.
	Dir string
	// AllowedDirs are the directories beyond Dir whose files the spicepod may
	// read (Options.AllowedDirs).
	AllowedDirs []string
}

// Paths confines the files the spicepod reads to Dir and AllowedDirs.
func (p *Pod) Paths() Paths { return Paths{Dir: p.Dir, Allowed: p.AllowedDirs} }

// Options say how LoadWith and ParseWith read a spicepod.
type Options struct {
	// Lookup resolves ${env:X} and ${secrets:X}; nil resolves nothing.
	Lookup func(name string) (string, bool)
	// AllowedDirs are absolute directories beyond the spicepod's own whose
	// files it may read (sql_ref, file: datasets, duckdb_open); see Paths and
	// AllowedDirs. Empty: its own directory only.
	AllowedDirs []string
}

// Dataset is one entry of datasets:.
type Dataset struct {
	// From is "<connector>:<path>", e.g. "postgres:public.orders". Required;
	// which connectors exist is decided by the binary, not here.
	From string
	// Name is the table name the dataset is served as: [schema.]table, each
	// part a SQL identifier (letters, digits, underscore, not starting with a
	// digit); "public." is dropped, as upstream's default schema. Required.
	Name        string
	Description string

	// Params are the connector's parameters with ${env:X} and ${secrets:X}
	// already substituted. Scalar YAML values keep their text ("5432").
	// Never nil.
	Params map[string]string

	// TimeColumn names the column append refreshes, refresh_data_window and
	// retention work on. "" when unset.
	TimeColumn string
	// TimeFormat is how TimeColumn is stored: timestamp, timestamptz,
	// unix_seconds, unix_millis or ISO8601. "" when unset (the connector
	// infers it from the column type).
	TimeFormat TimeFormat

	// ReadyState is on_load (default: ready after the first load) or
	// on_registration (ready at once, queries go to the source until loaded).
	ReadyState ReadyState

	// Acceleration is nil when the dataset has no acceleration block.
	Acceleration *Acceleration
}

// Connector splits From at the first ':' into the connector name and the
// connector-specific path: "postgres:public.orders" gives "postgres",
// "public.orders". The spice.ai connector's path form, written without a
// colon as upstream allows, gives "spice.ai" and the rest:
// "spice.ai/org/app/datasets/t" gives "spice.ai", "org/app/datasets/t".
func (d Dataset) Connector() (scheme, path string) {
	if rest, ok := strings.CutPrefix(d.From, spiceAIPathPrefix); ok {
		return "spice.ai", rest
	}
	scheme, path, _ = strings.Cut(d.From, ":")
	return scheme, path
}

// spiceAIPathPrefix starts upstream's colon-less form of a spice.ai dataset:
// spice.ai/<org>/<app>/datasets/<dataset>.
const spiceAIPathPrefix = "spice.ai/"

// Accelerated reports whether the dataset is held locally by the accelerator.
func (d Dataset) Accelerated() bool {
	return d.Acceleration != nil && d.Acceleration.Enabled
}

// Acceleration is a dataset's or view's acceleration block. Parse fills in
// every default, so the zero value of a field means what its comment says.
type Acceleration struct {
	// Enabled defaults to true when the block exists.
	Enabled bool
	// Engine is arrow (default) or duckdb. Both are served by embedded
	// DuckDB here; sqlite and postgres are refused.
	Engine Engine
	// Mode is memory (default) or file.
	Mode Mode
	// RefreshMode is full (default), append or changes. Whether a connector
	// can serve changes is decided by the engine, not here.
	RefreshMode RefreshMode
	// RefreshCheckInterval is the time between refreshes; 0 loads once.
	RefreshCheckInterval time.Duration
	// RefreshSQL is the refresh_sql text as written, "" when unset. See
	// RefreshFilter for its parsed form.
	RefreshSQL string
	// RefreshDataWindow, when set, loads only rows whose TimeColumn is within
	// this window of now. Requires TimeColumn.
	RefreshDataWindow time.Duration
	// RefreshAppendOverlap widens each append refresh backwards by this much
	// (duplicates of the overlap are dropped). Append mode only.
	RefreshAppendOverlap time.Duration
	// RefreshRetryEnabled defaults to true.
	RefreshRetryEnabled bool
	// RefreshRetryMaxAttempts bounds retries of one failed refresh; 0 means
	// unlimited (the upstream default). An explicit 0 in the file is refused.
	RefreshRetryMaxAttempts int
	// RefreshJitterEnabled adds a random delay of up to RefreshJitterMax to
	// each scheduled refresh. Default false.
	RefreshJitterEnabled bool
	// RefreshJitterMax defaults to DefaultJitterFraction of
	// RefreshCheckInterval when jitter is enabled; 0 otherwise.
	RefreshJitterMax time.Duration
	// RetentionCheckEnabled turns on deleting rows whose TimeColumn is older
	// than RetentionPeriod, checked every RetentionCheckInterval. When
	// enabled, both durations and TimeColumn are required.
	RetentionCheckEnabled  bool
	RetentionPeriod        time.Duration
	RetentionCheckInterval time.Duration
	// OnZeroResults is return_empty (default) or use_source.
	OnZeroResults OnZeroResults
	// PrimaryKey lists the key columns; nil when unset. Written as "id" or
	// "(a, b)".
	PrimaryKey []string
	// OnConflict maps a column, or "(a, b)", to drop or upsert. Never nil.
	OnConflict map[string]OnConflict
	// Indexes maps a column, or "(a, b)", to enabled or unique. Never nil.
	Indexes map[string]IndexKind
	// Params are accelerator parameters, substituted like dataset params.
	// Never nil.
	Params map[string]string
}

// View is one entry of views:. Its SQL is evaluated by DuckDB at query time,
// or materialized when it carries an enabled acceleration block.
type View struct {
	// Name follows the same rules as Dataset.Name and shares its namespace.
	Name        string
	Description string
	// SQL is the view's query: the sql key, or the contents of the sql_ref
	// file (resolved against Pod.Dir). Exactly one of the two is required.
	SQL string
	// Acceleration is nil when absent. A view is refreshed by recomputing it,
	// so only refresh_mode full is accepted.
	Acceleration *Acceleration
}

// Runtime is the runtime: block.
type Runtime struct {
	ResultsCache ResultsCache
	// Params are runtime parameters, substituted like dataset params.
	// Never nil.
	Params map[string]string
	// Auth is runtime.auth: API keys for the HTTP and Flight ports.
	Auth Auth
	// TLS is runtime.tls: the certificate both ports serve.
	TLS TLS
}

// ResultsCache is runtime.results_cache.
type ResultsCache struct {
	// Enabled defaults to true.
	Enabled bool
	// CacheMaxSize is in bytes; default DefaultCacheMaxSize (128 MiB).
	// Written as 128MiB, 1GiB, 512MB or a plain number of bytes.
	CacheMaxSize int64
	// ItemTTL defaults to DefaultItemTTL (1s).
	ItemTTL time.Duration
}

// Secret is one entry of secrets:, a named secret store. A reference
// ${<Name>:KEY} resolves through that store.
type Secret struct {
	Name string
	From string // only "env" is supported
}

// Load reads and validates the spicepod at path. lookup resolves ${env:X}
// and ${secrets:X} references; pass EnvLookup for the process environment.
// A missing file is reported with an error that satisfies
// errors.Is(err, fs.ErrNotExist).
func Load(path string, lookup func(name string) (string, bool)) (*Pod, error) {
	return LoadWith(path, Options{Lookup: lookup})
}

// LoadWith is Load with options.
func LoadWith(path string, o Options) (*Pod, error) {
	data, err := readLimited(path)
	var tooBig *Error
	if errors.As(err, &tooBig) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("read spicepod: %w", err)
	}
	return ParseWith(data, path, o)
}

// Parse validates data as the spicepod file named filename. filename is used
// in error messages and to resolve sql_ref. Every problem found is reported:
// the error is an *Error, or several joined with errors.Join, each naming the
// file, the line, the dataset or view and the field. At most MaxErrors are
// listed, then how many more there are. Files over MaxFileBytes, aliases that
// contain themselves and aliases expanding past MaxNodes are refused.
func Parse(data []byte, filename string, lookup func(string) (string, bool)) (*Pod, error) {
	return ParseWith(data, filename, Options{Lookup: lookup})
}

// ParseWith is Parse with options.
func ParseWith(data []byte, filename string, o Options) (*Pod, error) {
	lookup := o.Lookup
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	dir, err := filepath.Abs(filepath.Dir(filename))
	if err != nil {
		return nil, fmt.Errorf("resolve spicepod directory: %w", err)
	}
	if len(data) > MaxFileBytes {
		return nil, tooLarge(filename, int64(len(data)))
	}
	d := &decoder{file: filename, dir: dir, allowed: o.AllowedDirs, lookup: lookup}

	root, err := parseYAML(data)
	if err != nil {
		line, msg := splitYAMLError(err)
		d.fail(line, "", "", "%s", msg)
		return nil, d.err()
	}
	if line, msg := checkAliases(root); msg != "" {
		d.fail(line, "", "", "%s", msg)
		return nil, d.err()
	}
	pod := d.pod(root)
	if err := d.err(); err != nil {
		return nil, err
	}
	pod.Dir, pod.AllowedDirs = dir, o.AllowedDirs
	return pod, nil
}

// EnvLookup resolves a secret from the process environment the way the
// upstream env store does: the name is upper-cased, then SPICE_<NAME> is
// tried before <NAME>.
func EnvLookup(name string) (string, bool) {
	upper := strings.ToUpper(name)
	if v, ok := os.LookupEnv("SPICE_" + upper); ok {
		return v, true
	}
	return os.LookupEnv(upper)
}

var yamlErrorLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// splitYAMLError turns yaml.v3's "yaml: line 6: msg" into 6 and "msg".
func splitYAMLError(err error) (int, string) {
	m := yamlErrorLine.FindStringSubmatch(err.Error())
	if m == nil {
		return 0, strings.TrimPrefix(err.Error(), "yaml: ")
	}
	line, _ := strconv.Atoi(m[1])
	return line, "invalid YAML: " + m[2]
}

// parseYAML decodes exactly one YAML document into its root mapping node.
func parseYAML(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("file is empty; it needs at least version, kind and name")
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("line %d: a second YAML document follows; a spicepod is one document", extra.Line)
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("file is empty; it needs at least version, kind and name")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: the file must be a mapping with version, kind and name at the top", root.Line)
	}
	return root, nil
}
