//go:build duckdb_arrow

package duckdb

import (
	"database/sql/driver"
	"strings"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Inserted rows go into their table through an appender kept per write
// connection, table and column list: DuckDB creates an appender and plans an
// INSERT for a fraction of a millisecond each, which a change feed's small
// transactions would pay every time. A kept appender joins the connection's
// open transaction when it is flushed, so a rolled-back transaction takes its
// rows away too. It is made again after its table was replaced (its columns
// may have changed), and closed before the DB closes.

// appenders is the DB's set of kept appenders.
type appenders struct {
	mu   sync.Mutex
	kept map[any]map[string]*keptAppender // driver connection -> table and columns -> appender
}

type keptAppender struct {
	app *duckdb.Appender
	gen uint64 // the table's generation it was made for (captures.gen)
}

// get returns the kept appender of the table's columns on dc, making it when
// missing or made before the table was last replaced.
func (a *appenders) get(dc driver.Conn, table string, cols []string, gen uint64) (*duckdb.Appender, error) {
	key := table + "\x00" + strings.Join(cols, "\x00")
	a.mu.Lock()
	defer a.mu.Unlock()
	if k := a.kept[dc][key]; k != nil {
		if k.gen == gen {
			return k.app, nil
		}
		_ = k.app.Close()
		delete(a.kept[dc], key)
	}
	catalog, schema, name := "", "", ""
	if tmp, ok := strings.CutPrefix(table, "temp."); ok {
		catalog, schema, name = "temp", "main", tmp
	} else {
		schema, name = splitTable(table)
	}
	app, err := duckdb.NewAppenderWithColumns(dc, catalog, schema, name, cols)
	if err != nil {
		return nil, err
	}
	if a.kept == nil {
		a.kept = map[any]map[string]*keptAppender{}
	}
	if a.kept[dc] == nil {
		a.kept[dc] = map[string]*keptAppender{}
	}
	a.kept[dc][key] = &keptAppender{app: app, gen: gen}
	return app, nil
}

// drop closes the appenders of dc (its transaction failed: what they hold is
// discarded with it).
func (a *appenders) drop(dc any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, k := range a.kept[dc] {
		_ = k.app.Clear()
		_ = k.app.Close()
	}
	delete(a.kept, dc)
}

// close closes every appender; the DB calls it before closing its connections.
func (a *appenders) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range a.kept {
		for _, k := range m {
			_ = k.app.Close()
		}
	}
	a.kept = nil
}
