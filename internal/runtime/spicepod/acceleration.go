package spicepod

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// refusedEngines are upstream engines this runtime does not serve.
var refusedEngines = map[string]bool{"sqlite": true, "postgres": true, "cayenne": true, "turso": true}

var accelerationKeys = keySet{
	known: []string{
		"enabled", "engine", "mode",
		"refresh_mode", "refresh_check_interval", "refresh_sql", "refresh_data_window",
		"refresh_append_overlap", "refresh_retry_enabled", "refresh_retry_max_attempts",
		"refresh_jitter_enabled", "refresh_jitter_max",
		"retention_check_enabled", "retention_period", "retention_check_interval",
		"on_zero_results", "primary_key", "on_conflict", "indexes", "params",
		"ready_state",
	},
	unsupported: map[string]string{
		"refresh_cron":       "use refresh_check_interval",
		"refresh_on_startup": "a file-mode acceleration resumes from its stored watermark",
		"retention_sql":      "use retention_period with the dataset's time_column",
		"partition_by":       "remove it",
		"snapshots":          "remove it",
		"metrics":            "metrics are always exported",
	},
}

// accelContext is what acceleration checks need from the owner.
type accelContext struct {
	name       string // dataset or view name, for refresh_sql
	timeColumn string
	view       bool
	connector  string // the dataset's from: prefix ("postgres", "flightsql", "spice.ai")
}

// acceleration decodes the acceleration block of a dataset or view; nil when
// absent. readyState receives a deprecated acceleration.ready_state; it is
// nil for views, which have none.
func (o *object) acceleration(ctx accelContext, readyState *ReadyState) *Acceleration {
	c := o.child("acceleration", accelerationKeys)
	if c == nil {
		return nil
	}
	a := &Acceleration{
		Enabled:                 c.boolean("enabled", true),
		Engine:                  engine(c),
		Mode:                    enumOf(c, "mode", DefaultMode, modes),
		RefreshMode:             enumOf(c, "refresh_mode", DefaultRefreshMode, refreshModes),
		RefreshCheckInterval:    c.duration("refresh_check_interval"),
		RefreshSQL:              c.str("refresh_sql"),
		RefreshDataWindow:       c.duration("refresh_data_window"),
		RefreshAppendOverlap:    c.duration("refresh_append_overlap"),
		RefreshRetryEnabled:     c.boolean("refresh_retry_enabled", true),
		RefreshRetryMaxAttempts: c.positiveInt("refresh_retry_max_attempts", "remove the key for unlimited retries or set refresh_retry_enabled: false for none"),
		RefreshJitterEnabled:    c.boolean("refresh_jitter_enabled", false),
		RefreshJitterMax:        c.duration("refresh_jitter_max"),
		RetentionCheckEnabled:   c.boolean("retention_check_enabled", false),
		RetentionPeriod:         c.duration("retention_period"),
		RetentionCheckInterval:  c.duration("retention_check_interval"),
		OnZeroResults:           enumOf(c, "on_zero_results", DefaultOnZeroResults, zeroResults),
		PrimaryKey:              primaryKey(c),
		OnConflict:              enumMapOf(c, "on_conflict", conflicts),
		Indexes:                 enumMapOf(c, "indexes", indexKinds),
		Params:                  c.params("params"),
	}
	if c.has("ready_state") {
		switch {
		case readyState == nil:
			c.failf("ready_state", "views have no ready_state")
		case o.has("ready_state"):
			c.failf("ready_state", "is the deprecated place for ready_state and the dataset sets it too; keep only the dataset's")
		default:
			*readyState = enumOf(c, "ready_state", *readyState, readyStates)
		}
	}
	checkRefresh(c, a, ctx)
	checkRetention(c, a, ctx)
	checkConflicts(c, a)
	checkSubscription(c, a, ctx)
	return a
}

func engine(c *object) Engine {
	e, ok := c.scalar("engine")
	switch {
	case !ok:
		return DefaultEngine
	case refusedEngines[e]:
		c.d.failErr(ErrUnsupported, c.line("engine"), c.comp, c.field("engine"),
			"%q is not supported: this runtime serves arrow and duckdb, both on embedded DuckDB; use engine: duckdb (add mode: file to persist)", e)
	case !slices.Contains(engines, Engine(e)):
		c.failf("engine", "%s", oneOf(e, strs(engines)))
	default:
		return Engine(e)
	}
	return DefaultEngine
}

// checkRefresh refuses refresh settings that upstream accepts but that would
// never take effect, and parses refresh_sql.
func checkRefresh(c *object, a *Acceleration, ctx accelContext) {
	noTime := "set the dataset's time_column"
	if ctx.view {
		noTime = "views have no time_column"
	}
	if ctx.view && a.RefreshMode != DefaultRefreshMode {
		c.failf("refresh_mode", "%q is not possible for a view, which is refreshed by recomputing it; use full", a.RefreshMode)
	}
	if a.RefreshMode == RefreshAppend && ctx.timeColumn == "" && !ctx.view {
		c.failf("refresh_mode", "append needs time_column to find new rows (upstream silently never refreshes); %s", noTime)
	}
	if a.RefreshDataWindow > 0 && ctx.timeColumn == "" {
		c.failf("refresh_data_window", "needs time_column; %s", noTime)
	}
	if a.RefreshAppendOverlap > 0 && a.RefreshMode != RefreshAppend {
		c.failf("refresh_append_overlap", "only applies to refresh_mode: append, not %s", a.RefreshMode)
	}
	if a.RefreshRetryMaxAttempts > 0 && !a.RefreshRetryEnabled {
		c.failf("refresh_retry_max_attempts", "has no effect with refresh_retry_enabled: false")
	}
	checkJitter(c, a)
	if c.has("refresh_sql") {
		if ctx.view {
			c.failf("refresh_sql", "views have no refresh_sql; change the view's sql")
			return
		}
		if _, _, err := ParseRefreshSQL(a.RefreshSQL, ctx.name); err != nil {
			c.failf("refresh_sql", "%v", err)
		}
	}
}

func checkJitter(c *object, a *Acceleration) {
	switch {
	case a.RefreshJitterMax > 0 && !a.RefreshJitterEnabled:
		c.failf("refresh_jitter_max", "has no effect without refresh_jitter_enabled: true")
	case a.RefreshJitterEnabled && a.RefreshCheckInterval == 0:
		c.failf("refresh_jitter_enabled", "needs refresh_check_interval, there is no schedule to jitter")
	case a.RefreshJitterEnabled && a.RefreshJitterMax == 0:
		a.RefreshJitterMax = time.Duration(float64(a.RefreshCheckInterval) * DefaultJitterFraction)
	}
}

func checkRetention(c *object, a *Acceleration, ctx accelContext) {
	if !a.RetentionCheckEnabled {
		for _, k := range []string{"retention_period", "retention_check_interval"} {
			if c.has(k) {
				c.failf(k, "has no effect without retention_check_enabled: true")
			}
		}
		return
	}
	if ctx.timeColumn == "" {
		c.failf("retention_check_enabled", "needs the dataset's time_column to know which rows are old")
	}
	for _, k := range []string{"retention_period", "retention_check_interval"} {
		if !c.has(k) {
			c.failf(k, "is required with retention_check_enabled: true; write a duration such as 1h")
		}
	}
}

// subscribes reports whether a dataset with this connector and refresh mode
// subscribes to its upstream: refresh_mode: changes on flightsql: and spice.ai:.
func subscribes(connector string, mode RefreshMode) bool {
	return mode == RefreshChanges && (connector == "flightsql" || connector == "spice.ai")
}

// checkSubscription refuses settings that a subscription cannot honour: it
// receives the upstream's whole table or view and applies its row changes, so it
// cannot filter rows, nor drop local rows that later changes retract.
func checkSubscription(c *object, a *Acceleration, ctx accelContext) {
	if !subscribes(ctx.connector, a.RefreshMode) {
		return
	}
	why := "refresh_mode: changes subscribes to the upstream's whole " + ctx.connector + " table or view"
	if c.has("refresh_sql") {
		c.failf("refresh_sql", "cannot narrow a subscription: %s; filter in a view upstream and subscribe to it, or use refresh_mode: full", why)
	}
	if a.RefreshDataWindow > 0 {
		c.failf("refresh_data_window", "cannot narrow a subscription: %s; filter in a view upstream, or use refresh_mode: full", why)
	}
	if a.RetentionCheckEnabled {
		c.failf("retention_check_enabled", "cannot apply to a subscription: %s and deleting rows locally would make its changes fail; filter upstream instead", why)
	}
}

// checkConflicts applies upstream's rule: one on_conflict target, unless
// every target is drop.
func checkConflicts(c *object, a *Acceleration) {
	if len(a.OnConflict) < 2 {
		return
	}
	for _, v := range a.OnConflict {
		if v != ConflictDrop {
			c.failf("on_conflict", "has %d targets; only one target may be given, unless all are drop", len(a.OnConflict))
			return
		}
	}
}

func primaryKey(c *object) []string {
	s, ok := c.scalar("primary_key")
	if !ok {
		return nil
	}
	cols, err := parseColumns(s)
	if err != nil {
		c.failf("primary_key", "%v", err)
		return nil
	}
	return cols
}

// parseColumns parses a column reference: "id" or "(a, b)". Double quotes
// around a name are removed.
func parseColumns(s string) ([]string, error) {
	in := strings.TrimSpace(s)
	bad := fmt.Errorf("%q is not a column reference; write a column name such as id, or (a, b) for several", s)
	if strings.HasPrefix(in, "(") {
		if !strings.HasSuffix(in, ")") {
			return nil, bad
		}
		in = in[1 : len(in)-1]
	} else if strings.ContainsAny(in, ",()") {
		return nil, bad
	}
	var cols []string
	for part := range strings.SplitSeq(in, ",") {
		col := strings.TrimSpace(part)
		if len(col) >= 2 && col[0] == '"' && col[len(col)-1] == '"' {
			col = col[1 : len(col)-1]
		}
		if col == "" || strings.ContainsAny(col, `"()`) {
			return nil, bad
		}
		cols = append(cols, col)
	}
	return cols, nil
}
