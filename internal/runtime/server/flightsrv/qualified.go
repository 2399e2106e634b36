package flightsrv

import (
	"strings"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// A dataset or view named "spiceai.files" is table files of schema spiceai,
// as upstream registers it; other names are tables of schema DBSchema.

// splitName returns the catalog schema and table of a dataset or view name.
func splitName(name string) (schema, table string) {
	if s, t, ok := strings.Cut(name, "."); ok {
		return s, t
	}
	return DBSchema, name
}

// quoteName quotes a dataset or view name as a table reference.
func quoteName(name string) string {
	if s, t, ok := strings.Cut(name, "."); ok {
		return engine.Ident(s) + "." + engine.Ident(t)
	}
	return engine.Ident(name)
}

// schemas returns the catalog's schemas: DBSchema and the schema of every
// qualified name, sorted, each once.
func schemas(tables []engine.TableInfo) []string {
	out := []string{DBSchema}
	seen := map[string]bool{DBSchema: true}
	for _, t := range tables {
		s, _ := splitName(t.Name)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
