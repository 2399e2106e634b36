package spicepod

// The enum values of a spicepod, as written in the file. Parse accepts only
// these; code elsewhere compares with the constants, never with string literals.

// Engine is acceleration.engine. Both are served by embedded DuckDB here.
type Engine string

// Engines.
const (
	EngineArrow  Engine = "arrow"
	EngineDuckDB Engine = "duckdb"
)

// Mode is acceleration.mode: where the accelerated data lives.
type Mode string

// Modes.
const (
	ModeMemory Mode = "memory"
	ModeFile   Mode = "file" // persisted; a restart resumes from the stored watermark
)

// RefreshMode is acceleration.refresh_mode.
type RefreshMode string

// Refresh modes.
const (
	RefreshFull    RefreshMode = "full"    // replace the table on each refresh
	RefreshAppend  RefreshMode = "append"  // add rows newer than the held ones (needs time_column)
	RefreshChanges RefreshMode = "changes" // follow the source's change stream
)

// Streams reports whether the dataset follows a change stream instead of
// being refreshed.
func (m RefreshMode) Streams() bool { return m == RefreshChanges }

// OnZeroResults is acceleration.on_zero_results.
type OnZeroResults string

// On-zero-results behaviours.
const (
	ZeroResultsReturnEmpty OnZeroResults = "return_empty"
	ZeroResultsUseSource   OnZeroResults = "use_source" // ask the source when the local answer is empty
)

// OnConflict is a value of acceleration.on_conflict.
type OnConflict string

// Conflict behaviours.
const (
	ConflictDrop   OnConflict = "drop"   // keep the held row
	ConflictUpsert OnConflict = "upsert" // replace the held row
)

// IndexKind is a value of acceleration.indexes.
type IndexKind string

// Index kinds.
const (
	IndexEnabled IndexKind = "enabled"
	IndexUnique  IndexKind = "unique"
)

// ReadyState is a dataset's ready_state.
type ReadyState string

// Ready states.
const (
	ReadyOnLoad         ReadyState = "on_load"         // ready after the first load
	ReadyOnRegistration ReadyState = "on_registration" // ready at once; queries go to the source until loaded
)

// TimeFormat is a dataset's time_format: how its time_column is stored.
type TimeFormat string

// Time formats; "" means unset (the connector infers it from the column type).
const (
	TimeFormatTimestamp   TimeFormat = "timestamp"
	TimeFormatTimestamptz TimeFormat = "timestamptz"
	TimeFormatUnixSeconds TimeFormat = "unix_seconds"
	TimeFormatUnixMillis  TimeFormat = "unix_millis"
	TimeFormatISO8601     TimeFormat = "ISO8601"
)

// Allowed values of each enum, the first being the default where there is one.
var (
	engines      = []Engine{EngineArrow, EngineDuckDB}
	modes        = []Mode{ModeMemory, ModeFile}
	refreshModes = []RefreshMode{RefreshFull, RefreshAppend, RefreshChanges}
	zeroResults  = []OnZeroResults{ZeroResultsReturnEmpty, ZeroResultsUseSource}
	conflicts    = []OnConflict{ConflictDrop, ConflictUpsert}
	indexKinds   = []IndexKind{IndexEnabled, IndexUnique}
	readyStates  = []ReadyState{ReadyOnLoad, ReadyOnRegistration}
	timeFormats  = []TimeFormat{TimeFormatTimestamp, TimeFormatTimestamptz, TimeFormatUnixSeconds, TimeFormatUnixMillis, TimeFormatISO8601}
)

// enumOf decodes key as one of allowed; def when absent or invalid (reported).
func enumOf[T ~string](o *object, key string, def T, allowed []T) T {
	return T(o.enum(key, string(def), strs(allowed)...))
}

// enumMapOf decodes key as a mapping from column names to one of allowed.
// Never returns nil.
func enumMapOf[T ~string](o *object, key string, allowed []T) map[string]T {
	m := o.enumMap(key, strs(allowed)...)
	out := make(map[string]T, len(m))
	for k, v := range m {
		out[k] = T(v)
	}
	return out
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
