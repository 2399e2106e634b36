package main

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestMake(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	now := time.Now()
	made, err := Make(dir, []string{"postgres", "accelerated"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(made), 6; got != want {
		t.Fatalf("wrote %v, want %d files", made, want)
	}
	roots := x509.NewCertPool()
	roots.AddCert(mustCert(t, filepath.Join(dir, "ca.pem")))
	for _, svc := range []string{"postgres", "accelerated"} {
		c := mustCert(t, filepath.Join(dir, svc+".pem"))
		for _, name := range []string{svc, "localhost", "127.0.0.1"} {
			if _, err := c.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
				t.Errorf("%s for %s: %v", svc, name, err)
			}
		}
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, DNSName: "materialized"}); err == nil {
			t.Errorf("%s verifies for materialized, want only its own name", svc)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "ca-key.pem")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("ca-key.pem: %v %v, want mode 0600", fi.Mode(), err)
	}

	// A second run keeps every file and signs only the new service's.
	before, _ := os.ReadFile(filepath.Join(dir, "postgres.pem"))
	made, err = Make(dir, []string{"postgres", "accelerated", "materialized"}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "materialized.pem"), filepath.Join(dir, "materialized-key.pem")}
	if !slices.Equal(made, want) {
		t.Fatalf("second run wrote %v, want %v", made, want)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "postgres.pem")); string(after) != string(before) {
		t.Fatal("postgres.pem changed on the second run")
	}
	if _, err := mustCert(t, want[0]).Verify(x509.VerifyOptions{Roots: roots, DNSName: "materialized"}); err != nil {
		t.Fatalf("materialized, signed by the existing CA: %v", err)
	}
}

func TestMake_CAKeyMissing(t *testing.T) {
	dir := t.TempDir()
	if _, err := Make(dir, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "ca-key.pem")); err != nil {
		t.Fatal(err)
	}
	if _, err := Make(dir, []string{"postgres"}, time.Now()); err == nil {
		t.Fatal("signed without the CA's key")
	}
}

func mustCert(tb testing.TB, path string) *x509.Certificate {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		tb.Fatalf("%s: not PEM", path)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
