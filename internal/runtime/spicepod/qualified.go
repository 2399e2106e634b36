package spicepod

import (
	"strings"
)

// A dataset or view name may be schema-qualified, as upstream allows:
// "spiceai.files" is table files of schema spiceai, queried as spiceai.files.
// Upstream's default schema is public, so "public.orders" is table orders.

// reservedSchemas hold the runtime's and DuckDB's own tables.
var reservedSchemas = map[string]bool{
	"main": true, "temp": true, "_spice": true, "information_schema": true, "pg_catalog": true, "system": true,
}

// DefaultSchema is upstream's schema of unqualified names; a name qualified
// with it is the unqualified name.
const DefaultSchema = "public"

// qualifiedName checks a name of the form [schema.]table and returns it with
// the default schema dropped; ok is false (and the problem reported) when it
// is not valid.
func (o *object) qualifiedName(name string) (string, bool) {
	parts := strings.Split(name, ".")
	for _, p := range parts {
		if !identifier.MatchString(p) {
			o.failf("name", "%q is not a valid name: it becomes a DuckDB table name ([schema.]table), so use only letters, digits and underscores, not starting with a digit", name)
			return name, false
		}
	}
	switch {
	case len(parts) > 2:
		o.failf("name", "%q has %d parts; write table or schema.table (the catalog is always spice)", name, len(parts))
		return name, false
	case len(parts) == 1:
		return name, true
	case strings.EqualFold(parts[0], DefaultSchema):
		return parts[1], true
	case reservedSchemas[strings.ToLower(parts[0])]:
		o.failf("name", "%q uses schema %s, which holds the runtime's own tables; choose another schema name", name, parts[0])
		return name, false
	}
	return name, true
}

// checkQualified refuses what a schema-qualified dataset cannot do here: be
// read from its source per query (no acceleration, ready_state:
// on_registration, on_zero_results: use_source). Such reads go through a
// temporary table, and DuckDB's temporary tables have no schemas.
func (o *object) checkQualified(ds Dataset) {
	if !strings.Contains(ds.Name, ".") {
		return
	}
	const fix = "; accelerate it with ready_state: on_load, or name it without a schema"
	switch {
	case !ds.Accelerated():
		o.failErrf(ErrUnsupported, "name", "%q is schema-qualified, which this runtime serves only for accelerated datasets%s", ds.Name, fix)
	case ds.ReadyState == ReadyOnRegistration:
		o.failErrf(ErrUnsupported, "ready_state", "on_registration is not supported for the schema-qualified dataset %q%s", ds.Name, fix)
	case ds.Acceleration.OnZeroResults == ZeroResultsUseSource:
		o.failErrf(ErrUnsupported, "acceleration", "on_zero_results: use_source is not supported for the schema-qualified dataset %q%s", ds.Name, fix)
	}
}

func (o *object) failErrf(kind error, key, format string, args ...any) {
	o.d.failErr(kind, o.line(key), o.comp, o.field(key), format, args...)
}
