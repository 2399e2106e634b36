package spicepod

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

var (
	identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	connector  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.+-]*$`)
)

var datasetKeys = keySet{
	known: []string{
		"from", "name", "description", "params", "time_column", "time_format",
		"ready_state", "acceleration", "mode",
	},
	ignored: []string{"metadata", "dependsOn", "check_availability", "metrics"},
	unsupported: map[string]string{
		"ref":                     "write the dataset inline",
		"columns":                 "column metadata and embeddings are not served; remove it",
		"embeddings":              "embeddings are not served; remove it",
		"vectors":                 "vector search is not served; remove it",
		"replication":             "remove it",
		"has_metadata_table":      "remove it",
		"time_partition_column":   "remove it",
		"time_partition_format":   "remove it",
		"unsupported_type_action": "columns of types DuckDB cannot hold fail the load; remove it",
		"invalid_type_action":     "columns of types DuckDB cannot hold fail the load; remove it",
	},
}

// datasets decodes the datasets list.
func (d *decoder) datasets(n *yaml.Node, names *namespace) []Dataset {
	items := d.list(n, "datasets")
	out := make([]Dataset, 0, len(items))
	for i, item := range items {
		comp := component("dataset", i, item)
		o := d.object(item, comp, "", datasetKeys)
		if o == nil {
			continue
		}
		ds := Dataset{
			Name:        o.name(names),
			From:        o.from(),
			Description: o.str("description"),
			Params:      o.params("params"),
			TimeColumn:  o.str("time_column"),
			TimeFormat:  enumOf(o, "time_format", "", timeFormats),
			ReadyState:  enumOf(o, "ready_state", DefaultReadyState, readyStates),
		}
		if o.has("time_column") && ds.TimeColumn == "" {
			o.failf("time_column", "must not be empty; name a column or remove the key")
		}
		if ds.TimeFormat != "" && ds.TimeColumn == "" {
			o.failf("time_format", "has no effect without time_column")
		}
		if m := o.str("mode"); m != "" && m != "read" {
			d.failErr(ErrUnsupported, o.line("mode"), comp, "mode", "%q is not supported by this runtime; datasets are read-only here, remove the key", m)
		}
		scheme, _ := ds.Connector()
		ds.Acceleration = o.acceleration(accelContext{name: ds.Name, timeColumn: ds.TimeColumn, connector: scheme}, &ds.ReadyState)
		o.checkQualified(ds)
		out = append(out, ds)
	}
	return out
}

// from reads and checks the dataset's from.
func (o *object) from() string {
	f := o.required("from", "write <connector>:<path>, e.g. postgres:public.orders")
	if f == "" {
		return ""
	}
	if rest, ok := strings.CutPrefix(f, spiceAIPathPrefix); ok {
		if strings.Trim(rest, "/") == "" {
			o.failf("from", "%q names no dataset; write spice.ai/<org>/<app>/datasets/<dataset>", f)
		}
		return f
	}
	scheme, path, ok := strings.Cut(f, ":")
	switch {
	case !ok && identifier.MatchString(f):
		o.failf("from", "%q has no connector prefix; write <connector>:<path>, e.g. postgres:public.%s", f, f)
	case !ok:
		o.failf("from", "%q has no connector prefix; write <connector>:<path> such as postgres:public.orders, or spice.ai/<org>/<app>/datasets/<dataset>", f)
	case !connector.MatchString(scheme):
		o.failf("from", "%q does not start with a connector name; write <connector>:<path>, e.g. postgres:public.orders", f)
	case path == "":
		o.failf("from", "%q names no table after the connector; write %s:<path>", f, scheme)
	}
	return f
}

// list checks that n, when present, is a list and returns its items.
func (d *decoder) list(n *yaml.Node, key string) []*yaml.Node {
	n = resolve(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n.Line, "", key, "must be a list (each entry starting with -), got %s", describe(n))
		return nil
	}
	return n.Content
}

// component names list entry i for messages: by its name when it has one,
// else by position (1-based).
func component(kind string, i int, n *yaml.Node) string {
	n = resolve(n)
	if n.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(n.Content); j += 2 {
			k, v := resolve(n.Content[j]), resolve(n.Content[j+1])
			if k.Value == "name" && v.Kind == yaml.ScalarNode && strings.TrimSpace(v.Value) != "" && !isNull(v) {
				return fmt.Sprintf("%s %q", kind, strings.TrimSpace(v.Value))
			}
		}
	}
	return fmt.Sprintf("%s #%d", kind, i+1)
}

// namespace holds the table names of datasets and views, which DuckDB
// compares case-insensitively.
type namespace struct {
	seen map[string]string // lower-cased name -> "dataset \"x\" at line N"
}

// name reads, checks and registers the entry's name.
func (o *object) name(names *namespace) string {
	name := o.required("name", "it becomes the table name, e.g. name: orders")
	if name == "" {
		return ""
	}
	name, ok := o.qualifiedName(name)
	if !ok {
		return name
	}
	key := strings.ToLower(name)
	if prev, dup := names.seen[key]; dup {
		o.failf("name", "%q is already used by %s; datasets and views share one namespace and names compare case-insensitively", name, prev)
		return name
	}
	names.seen[key] = fmt.Sprintf("%s at line %d", o.comp, o.line("name"))
	return name
}
