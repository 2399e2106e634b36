// Package testcert makes TLS certificates for tests: a self-signed CA and a
// server certificate it signs for 127.0.0.1, ::1 and localhost, written as PEM
// files into a test's temporary directory.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Files are the PEM files of one CA and the server certificate it signed.
type Files struct {
	CAFile   string // the CA's certificate: what clients verify against
	CertFile string // the server's certificate
	KeyFile  string // the server's private key
	// Pool holds the CA, for clients built in the test.
	Pool *x509.CertPool
}

// New writes a fresh CA and server certificate into a temporary directory.
func New(tb testing.TB) Files {
	tb.Helper()
	dir := tb.TempDir()
	now := time.Now()

	caKey := newKey(tb)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "cqrs test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		tb.Fatalf("create CA certificate: %v", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		tb.Fatalf("parse CA certificate: %v", err)
	}

	leafKey := newKey(tb)
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		tb.Fatalf("create server certificate: %v", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(leafKey)
	if err != nil {
		tb.Fatalf("encode server key: %v", err)
	}

	f := Files{
		CAFile:   filepath.Join(dir, "ca.pem"),
		CertFile: filepath.Join(dir, "cert.pem"),
		KeyFile:  filepath.Join(dir, "key.pem"),
		Pool:     x509.NewCertPool(),
	}
	f.Pool.AddCert(ca)
	writePEM(tb, f.CAFile, "CERTIFICATE", caDER)
	writePEM(tb, f.CertFile, "CERTIFICATE", leafDER)
	writePEM(tb, f.KeyFile, "PRIVATE KEY", keyDER)
	return f
}

// ServerConfig is a TLS configuration serving the certificate.
func (f Files) ServerConfig(tb testing.TB) *tls.Config {
	tb.Helper()
	pair, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
	if err != nil {
		tb.Fatalf("load test certificate: %v", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
}

// ClientConfig is a TLS configuration trusting only the CA.
func (f Files) ClientConfig() *tls.Config {
	return &tls.Config{RootCAs: f.Pool, MinVersion: tls.VersionTLS12}
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatalf("generate key: %v", err)
	}
	return k
}

func writePEM(tb testing.TB, path, typ string, der []byte) {
	tb.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		tb.Fatalf("write %s: %v", path, err)
	}
}
