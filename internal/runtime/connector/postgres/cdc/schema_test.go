//go:build duckdb_arrow

package cdc_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres/cdc"
	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

// A column added or retyped at the source is noticed at the table's next change:
// the feed takes a new snapshot (counted), so the local table gets the new
// columns and no row lands in the wrong one.
func TestSchemaChangeTakesNewSnapshot(t *testing.T) {
	dsn := pg.NewDatabase(t)
	seedRecipe(t, dsn)
	r := startRuntime(t, pod(dsn, "memory"), "", nil)
	r.wait(t, currentLSN(t, dsn))

	mustExec(t, dsn,
		`ALTER TABLE products ADD COLUMN color text DEFAULT 'red'`,
		`UPDATE products SET color = 'blue', name = 'renamed' WHERE id = 3`,
		`ALTER TABLE orders ALTER COLUMN count TYPE bigint`,
		`UPDATE orders SET count = 5000000000 WHERE id = 1`)
	r.wait(t, currentLSN(t, dsn))
	mustMatchRecipe(t, r, dsn)
	const colors = `SELECT id::text AS a, coalesce(color, 'NULL') AS b FROM products ORDER BY id`
	mustEqual(t, "products.color", r.rows(t, colors), pgRows(t, dsn, colors))
	if got := resnapshots(t, r.reg)["schema_change"]; got < 1 {
		t.Errorf("cdc_resnapshots_total{reason=schema_change}=%v, want at least 1", got)
	}
}

// An update that leaves a TOASTed value alone does not send it; the value the
// local table holds is kept, also when the row's key changes, and also through a
// later update in the same transaction.
func TestUnchangedToastedValuesAreKept(t *testing.T) {
	dsn := pg.NewDatabase(t)
	mustExec(t, dsn, `CREATE TABLE docs (id int PRIMARY KEY, title text, body text)`,
		`ALTER TABLE docs ALTER COLUMN body SET STORAGE EXTERNAL`, // out of line, uncompressed: always TOASTed
		`INSERT INTO docs SELECT i, 'title ' || i, repeat(md5(i::text), 400) FROM generate_series(1, 5) i`)
	r := startRuntime(t, pod(dsn, "memory", "docs"), "", nil)
	r.wait(t, currentLSN(t, dsn))

	mustExec(t, dsn,
		`UPDATE docs SET title = 'changed' WHERE id = 1`,
		`UPDATE docs SET id = 10 WHERE id = 2`,
		"BEGIN",
		`UPDATE docs SET title = 'twice' WHERE id = 3`,
		`UPDATE docs SET id = 30, title = 'thrice' WHERE id = 3`,
		"COMMIT",
		"BEGIN",
		`INSERT INTO docs VALUES (6, 'new', repeat('x', 9000))`,
		`UPDATE docs SET title = 'new, changed' WHERE id = 6`,
		"COMMIT")
	r.wait(t, currentLSN(t, dsn))
	const docs = `SELECT id::text AS a, title, md5(body) AS c, length(body)::text AS d FROM docs ORDER BY id`
	mustEqual(t, "docs", r.rows(t, docs), pgRows(t, dsn, docs))
	if !strings.Contains(r.log.String(), "completing unchanged TOASTed values") {
		t.Errorf("no value was completed from the local table; the test no longer exercises TOAST:\n%s", r.log.String())
	}
}

// A table without a key the feed can match rows by fails with an error that names
// the table and the fix, shown in the dataset's status; other tables of the feed
// wait, and it recovers once the table is fixed.
func TestTableWithoutKeyFailsClearly(t *testing.T) {
	dsn := pg.NewDatabase(t)
	mustExec(t, dsn, `CREATE TABLE events (at timestamptz, what text)`, `INSERT INTO events VALUES (now(), 'a')`)
	r := startRuntime(t, pod(dsn, "memory", "events"), "", func(f *cdc.Feed) { f.MaxBackoff = time.Second })
	var msg string
	waitFor(t, "the error in the status", func() bool {
		st, _ := r.eng.StatusOf(context.Background(), "events")
		msg = st.LastError
		return msg != ""
	})
	for _, want := range []string{`"public"."events"`, "primary key", "REPLICA IDENTITY FULL"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	mustExec(t, dsn, `ALTER TABLE events ADD COLUMN id serial PRIMARY KEY`)
	r.wait(t, currentLSN(t, dsn))
	const events = `SELECT id::text AS a, what FROM events ORDER BY id`
	mustEqual(t, "events", r.rows(t, events), pgRows(t, dsn, events))
}

func TestConfigs(t *testing.T) {
	parse := func(yaml string) []spicepod.Dataset {
		t.Helper()
		p, err := spicepod.Parse([]byte(yaml), "spicepod.yaml", nil)
		if err != nil {
			t.Fatal(err)
		}
		return p.Datasets
	}
	const head = "version: v1\nkind: Spicepod\nname: My Pod\ndatasets:\n"
	ds := func(name, db, mode, extra string) string {
		return "  - from: postgres:public." + name + "\n    name: " + name +
			"\n    params: {pg_host: h, pg_db: " + db + ", pg_user: u" + extra + "}" +
			"\n    acceleration: {enabled: true, engine: duckdb, mode: " + mode + ", refresh_mode: changes}\n"
	}

	t.Run("one database, one slot", func(t *testing.T) {
		cfgs, err := cdc.Configs("My Pod", "", parse(head+ds("a", "d1", "file", "")+ds("b", "d1", "file", "")))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(cfgs), 1; got != want {
			t.Fatalf("configs=%d, want %d", got, want)
		}
		c := cfgs[0]
		if c.Slot != "spice_my_pod" || c.Publication != "spice_my_pod" || !c.File || len(c.Tables) != 2 {
			t.Fatalf("config %+v", c)
		}
	})
	t.Run("two databases, two slots", func(t *testing.T) {
		cfgs, err := cdc.Configs("p", "r1", parse(head+ds("a", "d1", "memory", "")+ds("b", "d2", "memory", "")))
		if err != nil {
			t.Fatal(err)
		}
		var slots []string
		for _, c := range cfgs {
			slots = append(slots, c.Slot)
		}
		if want := []string{"spice_p_r1_d1", "spice_p_r1_d2"}; !slices.Equal(slots, want) {
			t.Fatalf("slots=%v, want %v", slots, want)
		}
	})
	t.Run("params override the names", func(t *testing.T) {
		cfgs, err := cdc.Configs("p", "", parse(head+ds("a", "d1", "memory", ", pg_replication_slot: s1, pg_publication: p1")))
		if err != nil {
			t.Fatal(err)
		}
		if c := cfgs[0]; c.Slot != "s1" || c.Publication != "p1" {
			t.Fatalf("config %+v", c)
		}
	})
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"modes differ", head + ds("a", "d1", "memory", "") + ds("b", "d1", "file", ""), []string{"dataset b", "same mode"}},
		{"slots differ", head + ds("a", "d1", "memory", ", pg_replication_slot: s1") + ds("b", "d1", "memory", ", pg_replication_slot: s2"), []string{"dataset b", "pg_replication_slot", "s1"}},
		{"bad slot name", head + ds("a", "d1", "memory", ", pg_replication_slot: Bad-Name"), []string{"pg_replication_slot", "lower-case"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cdc.Configs("p", "", parse(tc.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	t.Run("refresh_sql", func(t *testing.T) {
		yaml := strings.Replace(head+ds("a", "d1", "memory", ""), "refresh_mode: changes}", "refresh_mode: changes, refresh_sql: 'SELECT * FROM a WHERE x > 1'}", 1)
		if _, err := cdc.Configs("p", "", parse(yaml)); !errors.Is(err, cdc.ErrUnsupported) {
			t.Fatalf("err=%v, want ErrUnsupported", err)
		}
	})
}

func TestName(t *testing.T) {
	for _, tc := range []struct{ pod, instance, db, want string }{
		{"sample", "", "", "spice_sample"},
		{"My Pod", "Replica-1", "", "spice_my_pod_replica_1"},
		{"sample", "", "orders", "spice_sample_orders"},
	} {
		if got := cdc.Name(tc.pod, tc.instance, tc.db); got != tc.want {
			t.Errorf("Name(%q, %q, %q)=%q, want %q", tc.pod, tc.instance, tc.db, got, tc.want)
		}
	}
	long := cdc.Name(strings.Repeat("x", 100), "a", "")
	if len(long) != 63 || long == cdc.Name(strings.Repeat("x", 100), "b", "") {
		t.Errorf("long names: %q (%d characters) must be 63 characters and still differ by instance", long, len(long))
	}
}
