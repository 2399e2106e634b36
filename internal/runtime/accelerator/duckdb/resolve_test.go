//go:build duckdb_arrow

package duckdb_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb"
	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// catalogDB holds datasets orders and spiceai.files, a view rankings, and a
// table leftover that is no dataset (as one a file-mode database keeps after
// its dataset left the spicepod); Relations lists the first three.
func catalogDB(t *testing.T) *duckdb.DB {
	t.Helper()
	db := MustOpen(t, "")
	write(t, db, func(tx *duckdb.Tx) error {
		for _, name := range []string{"orders", "spiceai.files", "leftover"} {
			if _, err := tx.Replace(name, orders(t, memory.DefaultAllocator, order{1, 1, 10, time.Now()}, order{2, 2, 20, time.Now()})); err != nil {
				return err
			}
		}
		return nil
	})
	if err := db.CreateView(context.Background(), "rankings", "SELECT product_id, sum(count) AS count FROM orders GROUP BY 1"); err != nil {
		t.Fatal(err)
	}
	db.Relations = func() []engine.TableInfo {
		return []engine.TableInfo{{Name: "orders", Type: "BASE TABLE"}, {Name: "rankings", Type: "VIEW"}, {Name: "spiceai.files", Type: "BASE TABLE"}}
	}
	return db
}

// userRows answers sql as a user's query, rows joined by "|".
func userRows(t *testing.T, db *duckdb.DB, sql string, args ...any) []string {
	t.Helper()
	res, err := db.Query(context.Background(), engine.StoreQuery{SQL: sql, Args: args, User: true})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer res.Release()
	var out []string
	for _, rec := range res.Records {
		for i := 0; i < int(rec.NumRows()); i++ {
			var row []string
			for _, col := range rec.Columns() {
				v := "NULL"
				if !col.IsNull(i) {
					v = strings.Clone(col.ValueStr(i))
				}
				row = append(row, v)
			}
			out = append(out, strings.Join(row, "|"))
		}
	}
	return out
}

func TestIntrospectionListsDatasetsAndViewsOnly(t *testing.T) {
	db := catalogDB(t)
	for _, tc := range []struct {
		name, sql string
		want      []string
	}{
		{"show tables", "SHOW TABLES", []string{"spice|public|orders|BASE TABLE", "spice|public|rankings|VIEW", "spice|spiceai|files|BASE TABLE"}},
		{"show all tables", "show all tables;", []string{"spice|public|orders|BASE TABLE", "spice|public|rankings|VIEW", "spice|spiceai|files|BASE TABLE"}},
		{"upstream REPL's show tables", "select table_catalog, table_schema, table_name, table_type from information_schema.tables where table_schema != 'information_schema'",
			[]string{"spice|public|orders|BASE TABLE", "spice|public|rankings|VIEW", "spice|spiceai|files|BASE TABLE"}},
		{"information_schema lists itself", "SELECT table_schema || '.' || table_name FROM spice.information_schema.tables WHERE table_type = 'VIEW' ORDER BY 1",
			[]string{"information_schema.columns", "information_schema.schemata", "information_schema.tables", "public.rankings"}},
		{"describe", "DESCRIBE orders", []string{"id|BIGINT|YES", "product_id|INTEGER|YES", "count|INTEGER|YES", "created_at|TIMESTAMP WITH TIME ZONE|YES"}},
		{"describe a qualified name", "describe spice.spiceai.files", []string{"id|BIGINT|YES", "product_id|INTEGER|YES", "count|INTEGER|YES", "created_at|TIMESTAMP WITH TIME ZONE|YES"}},
		{"describe a view (its sum as the BIGINT results carry)", "DESCRIBE spice.public.rankings", []string{"product_id|INTEGER|YES", "count|BIGINT|YES"}},
		{"columns", "SELECT table_name, column_name, ordinal_position, data_type FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'count' ORDER BY 1",
			[]string{"orders|count|3|INTEGER", "rankings|count|2|BIGINT"}},
		{"columns joined with tables, as BI tools do", `SELECT t.table_name, count(*) FROM information_schema.tables t JOIN information_schema.columns c
			ON c.table_schema = t.table_schema AND c.table_name = t.table_name GROUP BY 1 ORDER BY 1`, []string{"files|4", "orders|4", "rankings|2"}},
		{"qualified columns of information_schema", "SELECT information_schema.tables.table_name FROM information_schema.tables WHERE information_schema.tables.table_schema = 'spiceai'", []string{"files"}},
		{"schemata", "SELECT catalog_name, schema_name FROM information_schema.schemata ORDER BY 2", []string{"spice|information_schema", "spice|public", "spice|spiceai"}},
		{"show schemas", "SHOW SCHEMAS", []string{"spice|information_schema", "spice|public", "spice|spiceai"}},
		{"parameters", "SELECT count(*) FROM information_schema.columns WHERE table_name = ?", []string{"4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args []any
			if strings.Contains(tc.sql, "?") {
				args = []any{"orders"}
			}
			if got := userRows(t, db, tc.sql, args...); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("%s =\n%s\nwant\n%s", tc.sql, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	for _, sql := range []string{"SHOW TABLES", "SELECT * FROM information_schema.tables", "SELECT * FROM information_schema.columns"} {
		for _, row := range userRows(t, db, sql) {
			for _, leak := range []string{"_spice", "leftover", "duckdb_", "sqlite_", "main", "memory"} {
				if strings.Contains(row, leak) {
					t.Fatalf("%s lists %q, which reveals %q", sql, row, leak)
				}
			}
		}
	}
}

func TestQualifiedNamesResolveToDatasets(t *testing.T) {
	db := catalogDB(t)
	for _, tc := range []struct{ sql, want string }{
		{"SELECT count(*) FROM spice.public.orders", "2"},
		{"SELECT count(*) FROM public.orders", "2"},
		{`SELECT count(*) FROM "spice"."public"."orders"`, "2"},
		{"SELECT count(*) FROM Spice . Public . Orders", "2"},
		{"SELECT spice.public.orders.count FROM spice.public.orders WHERE spice.public.orders.id = 2", "20"},
		{"SELECT public.orders.count FROM public.orders WHERE public.orders.id = 1", "10"},
		{"SELECT o.count FROM spice.public.orders AS o WHERE o.id = 1", "10"},
		{"SELECT count(*) FROM spice.spiceai.files", "2"},
		{"SELECT spice.spiceai.files.count FROM spice.spiceai.files WHERE id = 2", "20"},
		{"SELECT sum(count) FROM spice.public.rankings", "30"},
		{"WITH x AS (SELECT * FROM public.orders) SELECT count(*) FROM x", "2"},
		{"SELECT count(*) FROM orders WHERE product_id IN (SELECT product_id FROM spice.public.orders WHERE id = 1)", "1"},
		{"SELECT count(*) FROM spice.public.orders a JOIN public.rankings b USING (product_id)", "2"},
		{"SELECT 'spice.public.orders' FROM spice.public.orders LIMIT 1", "spice.public.orders"},
	} {
		if got := userRows(t, db, tc.sql); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s = %v, want %s", tc.sql, got, tc.want)
		}
	}
	if got := userRows(t, db, "SELECT count FROM spice.public.orders WHERE id = ?", int64(2)); len(got) != 1 || got[0] != "20" {
		t.Errorf("with a parameter = %v, want 20", got)
	}
	for sql, want := range map[string]string{
		"SELECT * FROM spice.public.orders":       "orders",
		"SELECT * FROM spice.spiceai.files":       "spiceai.files",
		"SELECT * FROM spiceai.files":             "spiceai.files",
		"SELECT * FROM information_schema.tables": "",
	} {
		p, err := db.Parse(context.Background(), sql)
		if err != nil {
			t.Fatalf("Parse(%s): %v", sql, err)
		}
		if got := strings.Join(p.Tables, ","); got != want {
			t.Errorf("Parse(%s) tables = %q, want %q", sql, got, want)
		}
	}
}

// Names that resolve to the runtime's internals, and the introspection this
// runtime does not serve, stay refused.
func TestResolutionKeepsTheGuard(t *testing.T) {
	db := catalogDB(t)
	for _, tc := range []struct{ sql, want string }{
		{"SELECT * FROM spice._spice.watermarks", "_spice"},
		{"SELECT * FROM spice.public._spice_x", "_spice"},
		{"SELECT * FROM spice.information_schema.key_column_usage", "key_column_usage"},
		{"SELECT * FROM information_schema.tables, _spice.watermarks", "_spice"},
		{"SELECT * FROM information_schema.tables WHERE table_name IN (SELECT table_name FROM duckdb_tables())", "duckdb_tables"},
		{"SELECT * FROM (SHOW TABLES) WHERE table_name = 'x'", "SHOW"},
		{"SHOW DATABASES", "SHOW"},
		{"SUMMARIZE orders", "SHOW"},
		{"SELECT * FROM pg_catalog.pg_class", "pg_catalog"},
	} {
		_, err := db.Query(context.Background(), engine.StoreQuery{SQL: tc.sql, User: true})
		if !errors.Is(err, duckdb.ErrReadOnly) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want ErrReadOnly naming %q", tc.sql, err, tc.want)
		}
	}
	for _, sql := range []string{"DESCRIBE leftover", "DESCRIBE _spice.watermarks", "DESCRIBE information_schema.tables"} {
		_, err := db.Query(context.Background(), engine.StoreQuery{SQL: sql, User: true})
		if err == nil || !strings.Contains(err.Error(), "no dataset or view") {
			t.Errorf("%s: error %v, want no dataset or view", sql, err)
		}
	}
}

// The introspection answers have the columns and types of DataFusion's
// information_schema provider (apache/datafusion), which
// upstream Spice serves.
func TestIntrospectionHasDataFusionsColumns(t *testing.T) {
	db := catalogDB(t)
	utf8, u64 := arrow.BinaryTypes.String, arrow.PrimitiveTypes.Uint64
	for _, tc := range []struct {
		sql   string
		names []string
		types []arrow.DataType
	}{
		{"SHOW TABLES", []string{"table_catalog", "table_schema", "table_name", "table_type"}, []arrow.DataType{utf8, utf8, utf8, utf8}},
		{"DESCRIBE orders", []string{"column_name", "data_type", "is_nullable"}, []arrow.DataType{utf8, utf8, utf8}},
		{"SELECT * FROM information_schema.schemata", []string{"catalog_name", "schema_name", "schema_owner", "default_character_set_catalog",
			"default_character_set_schema", "default_character_set_name", "sql_path"}, []arrow.DataType{utf8, utf8, utf8, utf8, utf8, utf8, utf8}},
		{"SELECT * FROM information_schema.columns", []string{"table_catalog", "table_schema", "table_name", "column_name",
			"ordinal_position", "column_default", "is_nullable", "data_type", "character_maximum_length", "character_octet_length",
			"numeric_precision", "numeric_precision_radix", "numeric_scale", "datetime_precision", "interval_type"},
			[]arrow.DataType{utf8, utf8, utf8, utf8, u64, utf8, utf8, utf8, u64, u64, u64, u64, u64, u64, utf8}},
	} {
		res, err := db.Query(context.Background(), engine.StoreQuery{SQL: tc.sql, User: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		fields := res.Schema.Fields()
		res.Release()
		if len(fields) != len(tc.names) {
			t.Fatalf("%s: %d columns %v, want %v", tc.sql, len(fields), fields, tc.names)
		}
		for i, f := range fields {
			if f.Name != tc.names[i] || !arrow.TypeEqual(f.Type, tc.types[i]) {
				t.Errorf("%s column %d = %s %s, want %s %s", tc.sql, i, f.Name, f.Type, tc.names[i], tc.types[i])
			}
		}
	}
}
