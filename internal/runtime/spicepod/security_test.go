package spicepod_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
	"github.com/cqrs-spice/cqrs/internal/testcert"
)

const podHead = "version: v1\nkind: Spicepod\nname: secure\n"

func secretLookup(name string) (string, bool) {
	switch name {
	case "API_KEY":
		return "from-the-env", true
	case "EMPTY_KEY":
		return "", true
	case "RW_KEY":
		return "from-the-env:rw", true
	case "COLON_KEY":
		return "a:b", true
	case "SUFFIX_ONLY":
		return ":rw", true
	}
	return "", false
}

func TestParse_RuntimeAuth(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		want      spicepod.APIKeyAuth
	}{
		{"absent", "", spicepod.APIKeyAuth{}},
		{"keys", "runtime:\n  auth:\n    api-key:\n      enabled: true\n      keys: [literal, '${secrets:API_KEY}', '${env:API_KEY}']\n",
			spicepod.APIKeyAuth{Enabled: true, Keys: []spicepod.APIKey{{Key: "literal"}, {Key: "from-the-env"}, {Key: "from-the-env"}}}},
		{"enabled by default", "runtime:\n  auth:\n    api-key:\n      keys:\n        - k1\n",
			spicepod.APIKeyAuth{Enabled: true, Keys: []spicepod.APIKey{{Key: "k1"}}}},
		{"disabled without keys", "runtime:\n  auth:\n    api-key:\n      enabled: false\n",
			spicepod.APIKeyAuth{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pod, err := spicepod.Parse([]byte(podHead+tt.doc), "spicepod.yaml", secretLookup)
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "api-key", pod.Runtime.Auth.APIKey, tt.want)
		})
	}
}

// TestParse_APIKeyAccess: the :ro and :rw suffixes, written literally, after a
// reference or inside the substituted value; other colons are part of the key.
func TestParse_APIKeyAccess(t *testing.T) {
	for _, tt := range []struct {
		key  string
		want spicepod.APIKey
	}{
		{"plain", spicepod.APIKey{Key: "plain"}},
		{"plain:ro", spicepod.APIKey{Key: "plain"}},
		{"plain:rw", spicepod.APIKey{Key: "plain", ReadWrite: true}},
		{"'${env:API_KEY}'", spicepod.APIKey{Key: "from-the-env"}},
		{"'${env:API_KEY}:rw'", spicepod.APIKey{Key: "from-the-env", ReadWrite: true}},
		{"'${secrets:API_KEY}:ro'", spicepod.APIKey{Key: "from-the-env"}},
		{"'${env:RW_KEY}'", spicepod.APIKey{Key: "from-the-env", ReadWrite: true}},
		// A suffix after the reference wins; the value is then the key, whole.
		{"'${env:RW_KEY}:ro'", spicepod.APIKey{Key: "from-the-env:rw"}},
		{"'prefix-${env:API_KEY}:rw'", spicepod.APIKey{Key: "prefix-from-the-env", ReadWrite: true}},
		// Colons that are no suffix belong to the key.
		{"'a:b'", spicepod.APIKey{Key: "a:b"}},
		{"'a:rx'", spicepod.APIKey{Key: "a:rx"}},
		{"'a:b:rw'", spicepod.APIKey{Key: "a:b", ReadWrite: true}},
		{"'${env:COLON_KEY}'", spicepod.APIKey{Key: "a:b"}},
		{"'${env:COLON_KEY}:rw'", spicepod.APIKey{Key: "a:b", ReadWrite: true}},
		{"'${env:API_KEY}-tail'", spicepod.APIKey{Key: "from-the-env-tail"}},
		{"'key:rw:ro'", spicepod.APIKey{Key: "key:rw"}},
	} {
		t.Run(tt.key, func(t *testing.T) {
			doc := podHead + "runtime:\n  auth:\n    api-key:\n      keys: [" + tt.key + "]\n"
			pod, err := spicepod.Parse([]byte(doc), "spicepod.yaml", secretLookup)
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "keys", pod.Runtime.Auth.APIKey.Keys, []spicepod.APIKey{tt.want})
		})
	}
}

func TestParse_RuntimeTLS(t *testing.T) {
	certs := testcert.New(t)
	pem, err := os.ReadFile(certs.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(certs.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_TLS_CERT", string(pem))
	t.Setenv("TEST_TLS_KEY", string(key))

	// Files, relative to the spicepod's directory.
	dir := filepath.Dir(certs.CertFile)
	doc := podHead + "runtime:\n  tls:\n    enabled: true\n    certificate_file: cert.pem\n    key_file: " + certs.KeyFile + "\n"
	pod, err := spicepod.Parse([]byte(doc), filepath.Join(dir, "spicepod.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := pod.Runtime.TLS
	equal(t, "tls", got, spicepod.TLS{Enabled: true, CertificateFile: certs.CertFile, KeyFile: certs.KeyFile})
	pair, err := got.KeyPair()
	if err != nil || len(pair.Certificate) != 1 {
		t.Fatalf("KeyPair = %d certificates, %v; want 1, nil", len(pair.Certificate), err)
	}

	// Inline PEM from the environment.
	doc = podHead + "runtime:\n  tls:\n    certificate: ${env:TEST_TLS_CERT}\n    key: ${env:TEST_TLS_KEY}\n"
	pod, err = spicepod.Parse([]byte(doc), "spicepod.yaml", spicepod.EnvLookup)
	if err != nil {
		t.Fatal(err)
	}
	if !pod.Runtime.TLS.Enabled {
		t.Error("tls without enabled: want enabled")
	}
	if _, err := pod.Runtime.TLS.KeyPair(); err != nil {
		t.Errorf("KeyPair of inline PEM: %v", err)
	}
}

func TestParse_RuntimeSecurityInvalid(t *testing.T) {
	certs := testcert.New(t)
	dir := filepath.Dir(certs.CertFile)
	for _, tt := range []struct {
		name, doc string
		want      []string
		is        error
	}{
		{"enabled without keys", "runtime:\n  auth:\n    api-key:\n      enabled: true\n",
			[]string{"line 7: runtime.auth.api-key.keys: needs at least one key when enabled"}, nil},
		{"empty key list", "runtime:\n  auth:\n    api-key:\n      keys: []\n",
			[]string{"runtime.auth.api-key.keys: needs at least one key"}, nil},
		{"key from an empty variable", "runtime:\n  auth:\n    api-key:\n      keys:\n        - ${env:EMPTY_KEY}\n",
			[]string{"line 8: runtime.auth.api-key.keys #1: is empty"}, nil},
		{"key from a missing variable", "runtime:\n  auth:\n    api-key:\n      keys: ['${secrets:NO_SUCH_KEY}']\n",
			[]string{"runtime.auth.api-key.keys: ${secrets:NO_SUCH_KEY} is not set", "NO_SUCH_KEY"}, spicepod.ErrUnresolved},
		{"unknown suffix after a reference", "runtime:\n  auth:\n    api-key:\n      keys: ['${env:API_KEY}:rx']\n",
			[]string{`line 7: runtime.auth.api-key.keys #1: ends in ":rx" after its reference`, ":ro (read-only) or :rw (read-write)"}, nil},
		{"suffix without a key", "runtime:\n  auth:\n    api-key:\n      keys: [':rw']\n",
			[]string{"runtime.auth.api-key.keys #1: is empty"}, nil},
		{"variable holding only a suffix", "runtime:\n  auth:\n    api-key:\n      keys: ['${env:SUFFIX_ONLY}']\n",
			[]string{"runtime.auth.api-key.keys #1: is empty"}, nil},
		{"empty variable with a suffix", "runtime:\n  auth:\n    api-key:\n      keys: ['${env:EMPTY_KEY}:rw']\n",
			[]string{"runtime.auth.api-key.keys #1: is empty"}, nil},
		{"keys not a list", "runtime:\n  auth:\n    api-key:\n      keys: abc\n",
			[]string{"runtime.auth.api-key.keys: must be a list of keys"}, nil},
		{"unknown auth provider", "runtime:\n  auth:\n    jwt: {}\n",
			[]string{"runtime.auth.jwt: unknown key", "api-key"}, nil},
		{"tls without files", "runtime:\n  tls:\n    enabled: true\n",
			[]string{"runtime.tls.certificate_file: is required when TLS is enabled", "runtime.tls.key_file: is required"}, nil},
		{"tls with missing files", "runtime:\n  tls:\n    enabled: true\n    certificate_file: nowhere/cert.pem\n    key_file: key.pem\n",
			[]string{`line 7: runtime.tls.certificate_file: file "nowhere/cert.pem" does not exist`, filepath.Join(dir, "nowhere/cert.pem")}, nil},
		{"tls with a key that is not the certificate's", "runtime:\n  tls:\n    certificate_file: ca.pem\n    key_file: key.pem\n",
			[]string{"runtime.tls: load TLS certificate and key", "the key must belong to the certificate"}, nil},
		{"tls file and inline", "runtime:\n  tls:\n    certificate_file: cert.pem\n    certificate: x\n    key_file: key.pem\n",
			[]string{"runtime.tls.certificate: is set together with certificate_file"}, nil},
		{"mutual tls", "runtime:\n  tls:\n    certificate_file: cert.pem\n    key_file: key.pem\n    client_auth_mode: required\n",
			[]string{"runtime.tls.client_auth_mode: is not supported by this runtime", "API keys"}, spicepod.ErrUnsupported},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := spicepod.Parse([]byte(podHead+tt.doc), filepath.Join(dir, "spicepod.yaml"), secretLookup)
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q\ndoes not contain %q", err, want)
				}
			}
			if !errors.Is(err, spicepod.ErrInvalid) {
				t.Errorf("error %q does not match ErrInvalid", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q does not match %v", err, tt.is)
			}
		})
	}
}
