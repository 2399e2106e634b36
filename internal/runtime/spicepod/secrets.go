package spicepod

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// secretRef matches ${store:KEY}, with optional blanks inside the braces.
var secretRef = regexp.MustCompile(`\$\{\s*([A-Za-z0-9_-]+)\s*:\s*([^}\s]+)\s*\}`)

// storeSecrets is the reference prefix that searches every declared store.
const storeSecrets = "secrets"

var secretKeys = keySet{
	known:   []string{"from", "name"},
	ignored: []string{"description"},
	unsupported: map[string]string{
		"params": "only the env store exists here and it takes no params",
	},
}

// secrets decodes the top-level secrets list and records the store names that
// references may use. Without the key, the upstream default applies: one
// store named env reading the environment.
func (d *decoder) secrets(n *yaml.Node) []Secret {
	d.stores = map[string]bool{storeSecrets: true}
	if isNull(n) {
		d.stores["env"] = true
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n.Line, "", "secrets", "must be a list of stores such as `- {from: env, name: env}`, got %s", describe(n))
		d.stores["env"] = true
		return nil
	}
	var out []Secret
	for i, item := range n.Content {
		comp := fmt.Sprintf("secret #%d", i+1)
		o := d.object(item, comp, "", secretKeys)
		if o == nil {
			continue
		}
		s := Secret{Name: o.required("name", "name the store, e.g. env"), From: o.required("from", "write from: env")}
		if s.Name != "" {
			comp = fmt.Sprintf("secret %q", s.Name)
		}
		switch {
		case s.From == "":
		case s.From != "env":
			d.failErr(ErrUnsupported, o.line("from"), comp, "from", "%q is not supported by this runtime; only env (SPICE_<KEY> then <KEY>) is", s.From)
		case s.Name == storeSecrets:
			d.fail(o.line("name"), comp, "name", "%q is reserved: ${secrets:KEY} searches every store; choose another name", s.Name)
		case d.stores[s.Name]:
			d.fail(o.line("name"), comp, "name", "%q is declared twice", s.Name)
		case s.Name != "":
			d.stores[s.Name] = true
		}
		out = append(out, s)
	}
	return out
}

// params decodes key as a map of scalar parameters and substitutes secret
// references in the values. Never returns nil.
func (o *object) params(key string) map[string]string {
	out := map[string]string{}
	c := o.child(key, keySet{data: true})
	if c == nil {
		return out
	}
	for _, name := range c.order() {
		v, ok := c.scalar(name)
		if !ok {
			if c.get(name).Kind == yaml.ScalarNode {
				c.failf(name, "has no value; write \"\" for an empty string")
			}
			continue
		}
		out[name] = c.substitute(name, v)
	}
	return out
}

// substitute replaces every ${store:KEY} in v. A reference that does not
// resolve is an error: upstream silently substitutes "", which turns a typo in
// a password variable into a confusing authentication failure.
func (o *object) substitute(key, v string) string {
	out := secretRef.ReplaceAllStringFunc(v, func(ref string) string {
		m := secretRef.FindStringSubmatch(ref)
		store, name := m[1], m[2]
		if !o.d.stores[store] {
			o.failf(key, "%s names no secret store; declared: %s", ref, strings.Join(slices.Sorted(maps.Keys(o.d.stores)), ", "))
			return ref
		}
		if val, ok := o.d.lookup(name); ok {
			return val
		}
		o.d.failErr(ErrUnresolved, o.line(key), o.comp, o.field(key),
			"%s is not set; set %s in the environment of the runtime", ref, envHint(name))
		return ref
	})
	if rest := secretRef.ReplaceAllString(v, ""); strings.Contains(rest, "${") {
		o.failf(key, "has a malformed reference in %q; write ${env:NAME} or ${secrets:NAME}", v)
	}
	return out
}

// envHint names the environment variables EnvLookup reads for a secret: a
// name that already starts with SPICE_ is suggested as written, not doubled.
func envHint(name string) string {
	upper := strings.ToUpper(name)
	if strings.HasPrefix(upper, "SPICE_") {
		return upper
	}
	return "SPICE_" + upper + " or " + upper
}
