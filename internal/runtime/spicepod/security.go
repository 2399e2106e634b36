package spicepod

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// Auth is runtime.auth.
type Auth struct {
	APIKey APIKeyAuth
}

// APIKeyAuth is runtime.auth.api-key: when Enabled, every HTTP request (but
// /health and /v1/ready) and every Flight call must carry one of Keys.
type APIKeyAuth struct {
	Enabled bool
	// Keys are the accepted keys, secret references substituted and access
	// suffixes parsed (see APIKey). Never empty when Enabled.
	Keys []APIKey
}

// APIKey is one entry of runtime.auth.api-key.keys, as upstream writes them:
// `<key>:ro` is read-only, `<key>:rw` read-write, a key without either suffix
// read-only. The suffix is read from the end of the value after secret
// substitution, so `${env:KEY}:rw`, a literal `abc:rw` and a variable holding
// `abc:rw` all mean the key abc, read-write.
//
// A colon may be part of a key: any other ending (`a:b`) is kept whole as a
// read-only key, because it cannot be told apart from a key that contains a
// colon. Only text written after a reference is surely a suffix: there
// `${env:KEY}:rx` is an error. A key that itself ends in :ro or :rw is written
// with its suffix after it (`abc:rw:ro`).
type APIKey struct {
	Key       string
	ReadWrite bool
}

// Access suffixes of runtime.auth.api-key.keys.
const (
	suffixReadOnly  = ":ro"
	suffixReadWrite = ":rw"
)

// TLS is runtime.tls: when Enabled, the HTTP and Flight ports speak TLS only.
// The certificate comes from CertificateFile or Certificate (PEM), the key from
// KeyFile or Key; files are resolved against the spicepod's directory.
type TLS struct {
	Enabled         bool
	CertificateFile string
	KeyFile         string
	Certificate     string
	Key             string
}

var authKeys = keySet{known: []string{"api-key"}}

var apiKeyKeys = keySet{known: []string{"enabled", "keys"}}

var tlsKeys = keySet{
	known: []string{"enabled", "certificate_file", "key_file", "certificate", "key"},
	unsupported: map[string]string{
		"client_auth_mode":    "mutual TLS is not implemented; use API keys (runtime.auth.api-key)",
		"client_auth_ca_file": "mutual TLS is not implemented; use API keys (runtime.auth.api-key)",
	},
}

// KeyPair loads the certificate and key.
func (t TLS) KeyPair() (tls.Certificate, error) {
	cert, err := t.pem(t.CertificateFile, t.Certificate)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := t.pem(t.KeyFile, t.Key)
	if err != nil {
		return tls.Certificate{}, err
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("load TLS certificate and key: %w; both must be PEM and the key must belong to the certificate", err)
	}
	return pair, nil
}

func (t TLS) pem(file, inline string) ([]byte, error) {
	if file == "" {
		return []byte(inline), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read TLS file: %w", err)
	}
	return b, nil
}

// auth decodes runtime.auth.
func (o *object) auth() Auth {
	var a Auth
	c := o.child("auth", authKeys)
	if c == nil {
		return a
	}
	k := c.child("api-key", apiKeyKeys)
	if k == nil {
		return a
	}
	a.APIKey.Enabled = k.boolean("enabled", true)
	before := len(k.d.errs)
	a.APIKey.Keys = k.keyList("keys")
	if a.APIKey.Enabled && len(a.APIKey.Keys) == 0 && len(k.d.errs) == before {
		k.failf("keys", "needs at least one key when enabled, e.g. keys: [${secrets:API_KEY}]; or set enabled: false")
	}
	return a
}

// keyList decodes key as a list of non-empty scalars, secret references
// substituted and access suffixes parsed (see APIKey).
func (o *object) keyList(key string) []APIKey {
	n := o.get(key)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		o.failf(key, "must be a list of keys, got %s", describe(n))
		return nil
	}
	var out []APIKey
	for i, item := range n.Content {
		item = resolve(item)
		field := fmt.Sprintf("%s #%d", key, i+1)
		if item.Kind != yaml.ScalarNode || isNull(item) {
			o.d.fail(item.Line, o.comp, o.field(field), "must be a single value, got %s", describe(item))
			continue
		}
		k, err := o.apiKey(key, item.Value)
		if err != "" {
			o.d.fail(item.Line, o.comp, o.field(field), "%s", err)
			continue
		}
		out = append(out, k)
	}
	return out
}

// apiKey substitutes v's references and splits off its access suffix. The
// message is empty when v is a valid key.
func (o *object) apiKey(key, v string) (APIKey, string) {
	v = strings.TrimSpace(v)
	var k APIKey
	if written, ok := suffixAfterReference(v); ok {
		switch written {
		case suffixReadOnly, suffixReadWrite:
			k.Key, k.ReadWrite = o.substitute(key, strings.TrimSuffix(v, written)), written == suffixReadWrite
		default:
			return k, fmt.Sprintf("ends in %q after its reference; the access suffix must be :ro (read-only) or :rw (read-write), "+
				"or put the whole key in the variable", written)
		}
	} else {
		k.Key = strings.TrimSpace(o.substitute(key, v))
		switch {
		case strings.HasSuffix(k.Key, suffixReadWrite):
			k.Key, k.ReadWrite = strings.TrimSuffix(k.Key, suffixReadWrite), true
		case strings.HasSuffix(k.Key, suffixReadOnly):
			k.Key = strings.TrimSuffix(k.Key, suffixReadOnly)
		}
	}
	if strings.TrimSpace(k.Key) == "" {
		return k, "is empty; a key must not be blank (is the variable it references empty?)"
	}
	return k, ""
}

// suffixAfterReference returns the text written after v's last secret
// reference when it starts with a colon: `${env:KEY}:rw` gives ":rw". ok is
// false when v ends otherwise.
func suffixAfterReference(v string) (suffix string, ok bool) {
	refs := secretRef.FindAllStringIndex(v, -1)
	if len(refs) == 0 {
		return "", false
	}
	rest := v[refs[len(refs)-1][1]:]
	if !strings.HasPrefix(rest, ":") {
		return "", false
	}
	return rest, true
}

// tls decodes runtime.tls; when enabled it checks that the certificate and
// key load, so a bad path fails at start with the line to fix.
func (o *object) tls() TLS {
	var t TLS
	c := o.child("tls", tlsKeys)
	if c == nil {
		return t
	}
	before := len(c.d.errs)
	t.Enabled = c.boolean("enabled", true)
	t.CertificateFile = c.tlsFile("certificate_file")
	t.KeyFile = c.tlsFile("key_file")
	if s, ok := c.scalar("certificate"); ok {
		t.Certificate = c.substitute("certificate", s)
	}
	if s, ok := c.scalar("key"); ok {
		t.Key = c.substitute("key", s)
	}
	if !t.Enabled {
		return t
	}
	ok := true
	for _, p := range [][2]string{{"certificate_file", "certificate"}, {"key_file", "key"}} {
		switch file, inline := c.has(p[0]), c.has(p[1]); {
		case file && inline:
			c.failf(p[1], "is set together with %s; keep one", p[0])
			ok = false
		case !file && !inline:
			c.failf(p[0], "is required when TLS is enabled: the path of a PEM file (or write %s: with the PEM itself)", p[1])
			ok = false
		}
	}
	if !ok || len(c.d.errs) > before {
		return t
	}
	if _, err := t.KeyPair(); err != nil {
		c.d.fail(c.node.Line, c.comp, c.path, "%v", err)
	}
	return t
}

// tlsFile returns key as a path resolved against the spicepod's directory and
// reports a file that cannot be read.
func (o *object) tlsFile(key string) string {
	s, ok := o.scalar(key)
	if !ok {
		return ""
	}
	ref := strings.TrimSpace(o.substitute(key, s))
	if ref == "" {
		o.failf(key, "must not be empty; write the path of a PEM file")
		return ""
	}
	path := ref
	if !filepath.IsAbs(path) {
		path = filepath.Join(o.d.dir, ref)
	}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		o.failf(key, "file %q does not exist (looked at %s; a relative path is relative to the spicepod file)", ref, path)
	case err != nil:
		o.failf(key, "open %q: %v", ref, err)
	default:
		f.Close()
	}
	return path
}
