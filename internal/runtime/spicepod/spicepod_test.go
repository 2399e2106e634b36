package spicepod_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// testSecrets backs ${env:X} and ${secrets:X} in the fixtures.
var testSecrets = map[string]string{
	"PG_HOST": "db.internal",
	"PG_USER": "u",
	"PG_PASS": "secret",
}

func lookup(name string) (string, bool) {
	v, ok := testSecrets[name]
	return v, ok
}

// MustLoad loads a fixture from testdata/valid or fails the test.
func MustLoad(tb testing.TB, name string) *spicepod.Pod {
	tb.Helper()
	pod, err := spicepod.Load(filepath.Join("testdata", "valid", name), lookup)
	if err != nil {
		tb.Fatalf("load %s: %v", name, err)
	}
	return pod
}

func equal[T any](tb testing.TB, what string, got, want T) {
	tb.Helper()
	if !reflect.DeepEqual(got, want) {
		tb.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

const rankingsSQL = "with a as (SELECT products.id, sum(count) as count FROM orders INNER JOIN products " +
	"ON orders.product_id = products.id GROUP BY products.id) select name, count from products " +
	"left join a on products.id = a.id order by count desc limit 5"

func TestLoad_CookbookSample(t *testing.T) {
	pod := MustLoad(t, "cookbook-sample.yaml")

	equal(t, "version", pod.Version, "v1")
	equal(t, "kind", pod.Kind, "Spicepod")
	equal(t, "name", pod.Name, "sample")
	wantDir, _ := filepath.Abs(filepath.Join("testdata", "valid"))
	equal(t, "dir", pod.Dir, wantDir)
	if got, want := len(pod.Datasets), 2; got != want {
		t.Fatalf("datasets=%d, want %d", got, want)
	}
	for i, table := range []string{"products", "orders"} {
		ds := pod.Datasets[i]
		equal(t, "name", ds.Name, table)
		scheme, path := ds.Connector()
		equal(t, table+" connector", scheme+"|"+path, "postgres|public."+table)
		equal(t, table+" params", ds.Params, map[string]string{
			"pg_host": "postgres", "pg_db": "postgres", "pg_user": "postgres",
			"pg_pass": "postgres", "pg_sslmode": "disable",
		})
		equal(t, table+" ready_state", ds.ReadyState, "on_load")
		equal(t, table+" accelerated", ds.Accelerated(), true)
		checkDefaults(t, table, ds.Acceleration, 10*time.Second)
	}
	if got, want := len(pod.Views), 1; got != want {
		t.Fatalf("views=%d, want %d", got, want)
	}
	equal(t, "view name", pod.Views[0].Name, "rankings")
	equal(t, "view sql", pod.Views[0].SQL, rankingsSQL)
	equal(t, "view acceleration", pod.Views[0].Acceleration, (*spicepod.Acceleration)(nil))
	equal(t, "runtime", pod.Runtime, spicepod.Runtime{
		ResultsCache: spicepod.ResultsCache{Enabled: true, CacheMaxSize: 128 << 20, ItemTTL: time.Second},
		Params:       map[string]string{},
	})
	equal(t, "secrets", len(pod.Secrets), 0)
}

func TestLoad_CookbookMaterialized(t *testing.T) {
	pod := MustLoad(t, "cookbook-materialized.yaml")

	equal(t, "name", pod.Name, "materialized")
	if got, want := len(pod.Datasets), 1; got != want {
		t.Fatalf("datasets=%d, want %d", got, want)
	}
	ds := pod.Datasets[0]
	equal(t, "dataset name", ds.Name, "rankings")
	scheme, path := ds.Connector()
	equal(t, "connector", scheme+"|"+path, "flightsql|rankings")
	equal(t, "params", ds.Params, map[string]string{"flightsql_endpoint": "http://spiced:50051"})
	checkDefaults(t, "rankings", ds.Acceleration, 10*time.Second)
	equal(t, "views", len(pod.Views), 0)
}

// checkDefaults asserts an acceleration block that sets only enabled and
// refresh_check_interval got upstream's defaults.
func checkDefaults(tb testing.TB, what string, a *spicepod.Acceleration, interval time.Duration) {
	tb.Helper()
	if a == nil {
		tb.Fatalf("%s: acceleration is nil", what)
	}
	equal(tb, what+" enabled", a.Enabled, true)
	equal(tb, what+" engine", a.Engine, "arrow")
	equal(tb, what+" mode", a.Mode, "memory")
	equal(tb, what+" refresh_mode", a.RefreshMode, "full")
	equal(tb, what+" refresh_check_interval", a.RefreshCheckInterval, interval)
	equal(tb, what+" refresh_retry_enabled", a.RefreshRetryEnabled, true)
	equal(tb, what+" refresh_retry_max_attempts", a.RefreshRetryMaxAttempts, 0)
	equal(tb, what+" refresh_jitter_enabled", a.RefreshJitterEnabled, false)
	equal(tb, what+" on_zero_results", a.OnZeroResults, "return_empty")
	equal(tb, what+" primary_key", a.PrimaryKey, []string(nil))
	equal(tb, what+" on_conflict", a.OnConflict, map[string]spicepod.OnConflict{})
	equal(tb, what+" indexes", a.Indexes, map[string]spicepod.IndexKind{})
	equal(tb, what+" params", a.Params, map[string]string{})
	cols, where := a.RefreshFilter()
	equal(tb, what+" refresh filter", [2]any{cols, where}, [2]any{[]string(nil), ""})
}

func TestLoad_V1Beta1Full(t *testing.T) {
	pod := MustLoad(t, "v1beta1-full.yaml")

	equal(t, "version", pod.Version, "v1beta1")
	equal(t, "name", pod.Name, "full_beta")
	equal(t, "secrets", pod.Secrets, []spicepod.Secret{{Name: "env", From: "env"}, {Name: "vault_env", From: "env"}})

	ev := pod.Datasets[0]
	equal(t, "from", ev.From, "postgres:public.events")
	equal(t, "description", ev.Description, "Click events, appended by time.")
	equal(t, "params", ev.Params, map[string]string{
		"pg_host": "db.internal", "pg_port": "5432", "pg_db": "app", "pg_user": "u",
		"pg_pass": "secret", "pg_sslmode": "verify-full", "application_name": "events-db.internal",
	})
	equal(t, "time_column", ev.TimeColumn, "created_at")
	equal(t, "time_format", ev.TimeFormat, "timestamptz")
	equal(t, "ready_state", ev.ReadyState, "on_registration")

	a := ev.Acceleration
	equal(t, "enabled", a.Enabled, true)
	equal(t, "engine", a.Engine, "duckdb")
	equal(t, "mode", a.Mode, "file")
	equal(t, "refresh_mode", a.RefreshMode, "append")
	equal(t, "refresh_check_interval", a.RefreshCheckInterval, time.Minute)
	equal(t, "refresh_sql", a.RefreshSQL,
		`SELECT id, "userId", created_at FROM events WHERE kind = 'click' AND (amount > 0 OR amount IS NULL);`)
	cols, where := a.RefreshFilter()
	equal(t, "refresh columns", cols, []string{"id", "userId", "created_at"})
	equal(t, "refresh where", where, "kind = 'click' AND (amount > 0 OR amount IS NULL)")
	equal(t, "refresh_data_window", a.RefreshDataWindow, 24*time.Hour)
	equal(t, "refresh_append_overlap", a.RefreshAppendOverlap, 30*time.Second)
	equal(t, "refresh_retry_enabled", a.RefreshRetryEnabled, true)
	equal(t, "refresh_retry_max_attempts", a.RefreshRetryMaxAttempts, 5)
	equal(t, "refresh_jitter_enabled", a.RefreshJitterEnabled, true)
	equal(t, "refresh_jitter_max", a.RefreshJitterMax, 2*time.Second)
	equal(t, "retention_check_enabled", a.RetentionCheckEnabled, true)
	equal(t, "retention_period", a.RetentionPeriod, 7*24*time.Hour)
	equal(t, "retention_check_interval", a.RetentionCheckInterval, time.Hour)
	equal(t, "on_zero_results", a.OnZeroResults, "use_source")
	equal(t, "primary_key", a.PrimaryKey, []string{"id", "created_at"})
	equal(t, "on_conflict", a.OnConflict, map[string]spicepod.OnConflict{"(id, created_at)": "upsert"})
	equal(t, "indexes", a.Indexes, map[string]spicepod.IndexKind{"created_at": "enabled", "(id, created_at)": "unique"})
	equal(t, "acceleration params", a.Params, map[string]string{"duckdb_file": "/data/events.db"})

	products := pod.Datasets[1]
	equal(t, "products accelerated", products.Accelerated(), false)
	equal(t, "products acceleration present", products.Acceleration != nil, true)
	equal(t, "products params", products.Params, map[string]string{})

	equal(t, "view", pod.Views[0].Name, "top_events")
	equal(t, "view description", pod.Views[0].Description, "Most frequent events.")
	equal(t, "view sql from sql_ref", pod.Views[0].SQL,
		"-- The ten most frequent event kinds.\nSELECT kind, count(*) AS n FROM events GROUP BY kind ORDER BY n DESC LIMIT 10")

	equal(t, "runtime", pod.Runtime, spicepod.Runtime{
		ResultsCache: spicepod.ResultsCache{Enabled: true, CacheMaxSize: 1 << 30, ItemTTL: 500 * time.Millisecond},
		Params:       map[string]string{"note": "db.internal"},
	})
}

func TestLoad_V1Full(t *testing.T) {
	pod := MustLoad(t, "v1-full.yaml")

	equal(t, "version", pod.Version, "v1")
	equal(t, "customers params", pod.Datasets[0].Params, map[string]string{
		"pg_host": "db", "pg_db": "shop", "pg_user": "shop", "pg_pass": "secret", "pg_sslmode": "disable",
	})
	equal(t, "customers acceleration", pod.Datasets[0].Acceleration, (*spicepod.Acceleration)(nil))

	orders := pod.Datasets[1]
	equal(t, "merged params", orders.Params, map[string]string{
		"pg_host": "db", "pg_db": "orders_db", "pg_user": "shop", "pg_pass": "secret", "pg_sslmode": "disable",
	})
	equal(t, "time_format", orders.TimeFormat, "unix_millis")
	a := orders.Acceleration
	equal(t, "engine", a.Engine, "arrow")
	equal(t, "refresh_mode", a.RefreshMode, "changes")
	equal(t, "refresh_check_interval", a.RefreshCheckInterval, 90*time.Minute)
	equal(t, "refresh_retry_enabled", a.RefreshRetryEnabled, false)
	equal(t, "default jitter max", a.RefreshJitterMax, 9*time.Minute)
	equal(t, "primary_key", a.PrimaryKey, []string{"id"})
	equal(t, "on_conflict", a.OnConflict, map[string]spicepod.OnConflict{"id": "upsert"})
	equal(t, "indexes", a.Indexes, map[string]spicepod.IndexKind{"customer_id": "enabled"})

	remote := pod.Datasets[2]
	equal(t, "mixed-case name", remote.Name, "Remote_Rankings")
	equal(t, "deprecated acceleration.ready_state", remote.ReadyState, "on_registration")
	cols, where := remote.Acceleration.RefreshFilter()
	equal(t, "select * filter", [2]any{cols, where}, [2]any{[]string(nil), ""})

	v := pod.Views[0]
	equal(t, "view sql", v.SQL, "SELECT customer_id, sum(amount) AS total\nFROM orders GROUP BY customer_id")
	equal(t, "view refresh_mode", v.Acceleration.RefreshMode, "full")
	equal(t, "view refresh_check_interval", v.Acceleration.RefreshCheckInterval, 5*time.Second)

	equal(t, "results_cache", pod.Runtime.ResultsCache, spicepod.ResultsCache{
		Enabled: false, CacheMaxSize: 512_000_000, ItemTTL: 2 * time.Second,
	})
}

func TestLoad_Invalid(t *testing.T) {
	for _, tt := range []struct {
		file string
		want []string // substrings of the message, besides the file name
		is   error    // a sentinel the error must match, besides ErrInvalid
	}{
		{"bad-refresh-mode.yaml", []string{`line 12: dataset "orders": acceleration.refresh_mode: "chnges" is not one of full, append, changes`}, nil},
		{"unknown-dataset-key.yaml", []string{`dataset "orders"`, "time_colum: unknown key (did you mean time_column?)"}, nil},
		{"unknown-acceleration-key.yaml", []string{`dataset "orders"`, "acceleration.refresh_interval: unknown key (did you mean refresh_check_interval?)"}, nil},
		{"unknown-view-key.yaml", []string{`view "rankings"`, "query: unknown key", "allowed keys: name, description, sql, sql_ref, acceleration"}, nil},
		{"unknown-results-cache-key.yaml", []string{"runtime.results_cache.max_size: unknown key"}, nil},
		{"unknown-top-level-key.yaml", []string{"line 5: dataset: unknown key (did you mean datasets?)"}, nil},
		{"duplicate-dataset.yaml", []string{`dataset "orders": name: "orders" is already used by dataset "orders" at line 7`}, nil},
		{"duplicate-view-dataset.yaml", []string{`view "Orders": name:`, "share one namespace", "case-insensitively"}, nil},
		{"duplicate-key.yaml", []string{`dataset "orders": name: is set twice (first at line 7)`}, nil},
		{"missing-name.yaml", []string{"dataset #2: name: is required"}, nil},
		{"missing-from.yaml", []string{`dataset "orders": from: is required`}, nil},
		{"from-without-connector.yaml", []string{`from: "orders" has no connector prefix`, "postgres:public.orders"}, nil},
		{"bad-duration.yaml", []string{`acceleration.refresh_check_interval: "10 seconds" is not a duration`, "10s"}, nil},
		{"zero-duration.yaml", []string{"acceleration.refresh_check_interval:", "longer than zero"}, nil},
		{"engine-sqlite.yaml", []string{`acceleration.engine: "sqlite" is not supported`, "arrow and duckdb, both on embedded DuckDB"}, spicepod.ErrUnsupported},
		{"engine-unknown.yaml", []string{`acceleration.engine: "mysql" is not one of arrow, duckdb`}, nil},
		{"append-without-time-column.yaml", []string{"acceleration.refresh_mode: append needs time_column"}, nil},
		{"data-window-without-time-column.yaml", []string{"acceleration.refresh_data_window: needs time_column"}, nil},
		{"refresh-sql-other-table.yaml", []string{"acceleration.refresh_sql: must read FROM this dataset, orders, not products"}, nil},
		{"refresh-sql-group-by.yaml", []string{"acceleration.refresh_sql: only WHERE, ORDER BY and LIMIT may follow", "GROUP"}, nil},
		{"refresh-sql-expression.yaml", []string{"acceleration.refresh_sql: the select list must be * or column names"}, nil},
		{"bad-version.yaml", []string{`line 1: version: "v2" is not one of v1beta1, v1`}, nil},
		{"missing-version.yaml", []string{"version: is required"}, nil},
		{"bad-kind.yaml", []string{`kind: "Pod" is not one of Spicepod`}, nil},
		{"unresolved-env.yaml", []string{`dataset "orders": params.pg_pass: ${env:MISSING_PASS} is not set`, "SPICE_MISSING_PASS"}, spicepod.ErrUnresolved},
		{"unknown-secret-store.yaml", []string{"params.pg_pass: ${vault:PG_PASS} names no secret store", "env"}, nil},
		{"secret-store-unsupported.yaml", []string{`secret "k8s": from: "kubernetes:my_secret" is not supported`, "only env"}, spicepod.ErrUnsupported},
		{"malformed-reference.yaml", []string{"params.pg_pass: has a malformed reference"}, nil},
		{"view-without-sql.yaml", []string{`view "rankings": sql: is required`, "sql_ref"}, nil},
		{"view-sql-and-sql-ref.yaml", []string{`view "rankings": sql_ref: is set together with sql`}, nil},
		{"view-sql-ref-missing.yaml", []string{`view "rankings": sql_ref: file "queries/missing.sql" does not exist`}, nil},
		{"view-append.yaml", []string{`view "rankings": acceleration.refresh_mode: "append" is not possible for a view`}, nil},
		{"view-refresh-sql.yaml", []string{`view "rankings": acceleration.refresh_sql: views have no refresh_sql`}, nil},
		{"name-with-dot.yaml", []string{`name: "spice.public.orders" has 3 parts`, "schema.table"}, nil},
		{"name-bad-part.yaml", []string{`name: "sales.1customer" is not a valid name`, "DuckDB table name", "letters, digits and underscores"}, nil},
		{"name-reserved-schema.yaml", []string{`name: "_spice.watermarks" uses schema _spice`}, nil},
		{"name-qualified-federated.yaml", []string{`name: "sales.customer" is schema-qualified`, "only for accelerated datasets"}, spicepod.ErrUnsupported},
		{"name-starts-with-digit.yaml", []string{`name: "1rankings" is not a valid name`, "not starting with a digit"}, nil},
		{"bad-time-format.yaml", []string{`time_format: "iso8601" is not one of timestamp, timestamptz, unix_seconds, unix_millis, ISO8601`}, nil},
		{"bad-ready-state.yaml", []string{`ready_state: "eventually" is not one of on_load, on_registration`}, nil},
		{"bad-on-conflict.yaml", []string{`acceleration.on_conflict.id: "replace" is not one of drop, upsert`}, nil},
		{"bad-index.yaml", []string{`acceleration.indexes.customer_id: "btree" is not one of enabled, unique`}, nil},
		{"bad-primary-key.yaml", []string{`acceleration.primary_key: "(id, created_at" is not a column reference`}, nil},
		{"bad-cache-size.yaml", []string{`runtime.results_cache.cache_max_size: "lots" is not a size`, "128MiB"}, nil},
		{"bad-item-ttl.yaml", []string{`runtime.results_cache.item_ttl: "forever" is not a duration`}, nil},
		{"bad-boolean.yaml", []string{`acceleration.enabled: "yes" is not a boolean; write true or false`}, nil},
		{"retention-without-period.yaml", []string{"acceleration.retention_period: is required with retention_check_enabled: true"}, nil},
		{"subscription-refresh-sql.yaml", []string{`dataset "rankings"`, "acceleration.refresh_sql: cannot narrow a subscription", "whole flightsql table or view"}, nil},
		{"subscription-retention.yaml", []string{"acceleration.retention_check_enabled: cannot apply to a subscription", "spice.ai"}, nil},
		{"retry-zero.yaml", []string{`acceleration.refresh_retry_max_attempts: "0" is not a whole number of at least 1`}, nil},
		{"param-not-scalar.yaml", []string{"params.pg_port: must be a single value, got a list"}, nil},
		{"yaml-syntax.yaml", []string{"yaml-syntax.yaml: line 6: invalid YAML: did not find expected"}, nil},
		{"empty.yaml", []string{"file is empty"}, nil},
	} {
		t.Run(strings.TrimSuffix(tt.file, ".yaml"), func(t *testing.T) {
			path := filepath.Join("testdata", "invalid", tt.file)
			pod, err := spicepod.Load(path, lookup)
			if err == nil {
				t.Fatalf("Load(%s) = %+v, want an error", tt.file, pod)
			}
			msg := err.Error()
			for _, want := range append([]string{path + ": "}, tt.want...) {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q\ndoes not contain %q", msg, want)
				}
			}
			if !errors.Is(err, spicepod.ErrInvalid) {
				t.Errorf("error %q does not match ErrInvalid", msg)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q does not match %v", msg, tt.is)
			}
		})
	}
}

func TestParse_ReportsEveryProblemInFileOrder(t *testing.T) {
	const doc = `version: v1
kind: Spicepod
name: many
datasets:
  - from: orders
    name: orders
    acceleration:
      refresh_mode: sometimes
views:
  - name: orders
    sql: SELECT 1
runtime:
  results_cache:
    item_ttl: soon
`
	_, err := spicepod.Parse([]byte(doc), "many.yaml", lookup)
	if err == nil {
		t.Fatal("Parse succeeded, want errors")
	}
	var lines []int
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var pe *spicepod.Error
		if !errors.As(e, &pe) {
			t.Fatalf("%v is not a *spicepod.Error", e)
		}
		equal(t, "file", pe.File, "many.yaml")
		lines = append(lines, pe.Line)
	}
	equal(t, "lines of the errors", lines, []int{5, 8, 10, 14})
}

func TestParse_NilLookupFailsReferences(t *testing.T) {
	const doc = "version: v1\nkind: Spicepod\nname: x\nruntime:\n  params:\n    key: ${secrets:API_KEY}\n"
	_, err := spicepod.Parse([]byte(doc), "x.yaml", nil)
	if !errors.Is(err, spicepod.ErrUnresolved) {
		t.Fatalf("err = %v, want ErrUnresolved", err)
	}
	var pe *spicepod.Error
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *spicepod.Error", err)
	}
	equal(t, "field", pe.Field, "runtime.params.key")
	equal(t, "line", pe.Line, 6)
}

func TestLoad_MissingFile(t *testing.T) {
	_, err := spicepod.Load(filepath.Join(t.TempDir(), "spicepod.yaml"), lookup)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want fs.ErrNotExist", err)
	}
}

func TestEnvLookup(t *testing.T) {
	t.Setenv("SPICE_PG_PASS", "prefixed")
	t.Setenv("PG_PASS", "plain")
	t.Setenv("PG_USER", "plain-user")

	for _, tt := range []struct {
		name   string
		want   string
		wantOK bool
	}{
		{"PG_PASS", "prefixed", true},
		{"pg_pass", "prefixed", true},
		{"pg_user", "plain-user", true},
		{"NOT_SET_ANYWHERE_42", "", false},
	} {
		got, ok := spicepod.EnvLookup(tt.name)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("EnvLookup(%q) = %q, %v, want %q, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestDataset_Connector(t *testing.T) {
	for _, tt := range []struct {
		from, scheme, path string
	}{
		{"postgres:public.orders", "postgres", "public.orders"},
		{"flightsql:rankings", "flightsql", "rankings"},
		{"s3://bucket/key:part", "s3", "//bucket/key:part"},
		{"nothing", "nothing", ""},
	} {
		scheme, path := spicepod.Dataset{From: tt.from}.Connector()
		if scheme != tt.scheme || path != tt.path {
			t.Errorf("Connector(%q) = %q, %q, want %q, %q", tt.from, scheme, path, tt.scheme, tt.path)
		}
	}
}
