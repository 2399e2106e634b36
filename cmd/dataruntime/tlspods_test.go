//go:build duckdb_arrow

package main

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
	"github.com/cqrs-spice/cqrs/internal/testcert"
)

// tlsParams are the dataset params in which the TLS mode's spicepods
// (spicepods/tls/, make TLS=1) may differ from the plain ones.
var tlsParams = []string{"pg_sslmode", "pg_sslrootcert", "flightsql_endpoint", "flightsql_tls_ca_certificate_file"}

// TestTLSSpicepods keeps spicepods/tls/* loadable and equal to spicepods/*
// but for TLS: the same datasets, views and keys, with runtime.tls on.
func TestTLSSpicepods(t *testing.T) {
	cert := testcert.New(t)
	certs := t.TempDir()
	copyFile(t, cert.CAFile, filepath.Join(certs, "ca.pem"))
	for _, svc := range []string{"accelerated", "materialized"} { // as make certs names them
		copyFile(t, cert.CertFile, filepath.Join(certs, svc+".pem"))
		copyFile(t, cert.KeyFile, filepath.Join(certs, svc+"-key.pem"))
	}
	env := func(string) (string, bool) { return "1", true }
	for _, rt := range []string{"accelerated", "materialized"} {
		t.Run(rt, func(t *testing.T) {
			plain, err := spicepod.Load(filepath.Join("../../spicepods", rt, "spicepod.yaml"), env)
			if err != nil {
				t.Fatal(err)
			}
			text, err := os.ReadFile(filepath.Join("../../spicepods/tls", rt, "spicepod.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "spicepod.yaml")
			if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(text), "/certs/", certs+"/")), 0o600); err != nil {
				t.Fatal(err)
			}
			tls, err := spicepod.Load(path, env)
			if err != nil {
				t.Fatal(err)
			}
			if !tls.Runtime.TLS.Enabled {
				t.Fatal("runtime.tls is off")
			}
			if !reflect.DeepEqual(plain.Views, tls.Views) || !reflect.DeepEqual(plain.Runtime.Auth, tls.Runtime.Auth) ||
				plain.Name != tls.Name || len(plain.Datasets) != len(tls.Datasets) {
				t.Fatalf("views, auth, name or datasets differ from the plain spicepod's")
			}
			for i := range plain.Datasets {
				p, q := plain.Datasets[i], tls.Datasets[i]
				pp, qp := maps.Clone(p.Params), maps.Clone(q.Params)
				for _, k := range tlsParams {
					delete(pp, k)
					delete(qp, k)
				}
				p.Params, q.Params = pp, qp
				if !reflect.DeepEqual(p, q) {
					t.Errorf("dataset %s:\n plain %+v\n tls   %+v", p.Name, p, q)
				}
			}
		})
	}
}

func copyFile(tb testing.TB, from, to string) {
	tb.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		tb.Fatal(err)
	}
}
