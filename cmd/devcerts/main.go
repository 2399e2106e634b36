// Command devcerts makes the certificates of the stack's TLS mode (make TLS=1):
// a local CA and, per service, a certificate it signs for the service's compose
// name, localhost and 127.0.0.1. Files that exist are kept, never overwritten:
// delete the directory to make new ones. Bring your own by putting files of the
// same names there (see docs/operations.md, TLS).
//
//	devcerts [--dir certs] [--services postgres,accelerated,materialized]
//
// It writes ca.pem (what clients trust), ca-key.pem (mode 0600, needed only to
// sign more), and <service>.pem with <service>-key.pem. The services' keys are
// mode 0644: the containers read them as users other than the host's (the
// runtimes run as 65532; Postgres's entrypoint copies its key to mode 0600).
// They are for a local stack only.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Defaults of the flags.
const (
	DefaultDir      = "certs"
	DefaultServices = "postgres,accelerated,materialized"
	// DefaultValidity is how long the CA and the certificates are valid.
	DefaultValidity = 5 * 365 * 24 * time.Hour
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	var dir, services string
	if err := flags(&dir, &services, stderr).Parse(args); err != nil {
		return 2
	}
	made, err := Make(dir, strings.Split(services, ","), time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "devcerts: %v\n", err)
		return 1
	}
	for _, f := range made {
		fmt.Fprintf(stdout, "devcerts: wrote %s\n", f)
	}
	if len(made) == 0 {
		fmt.Fprintf(stdout, "devcerts: %s is complete, nothing written\n", dir)
	}
	return 0
}

// flags returns devcerts' flag set.
func flags(dir, services *string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("devcerts", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(dir, "dir", DefaultDir, "directory of the files; made when missing")
	fs.StringVar(services, "services", DefaultServices, "comma-separated services to make a certificate for (their compose names)")
	return fs
}

// Make writes into dir the CA and each service's certificate that are missing
// and returns the files written. An existing CA signs new certificates, which
// needs its key; existing files are never changed.
func Make(dir string, services []string, now time.Time) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make %s: %w", dir, err)
	}
	caFile, caKeyFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem")
	var made []string
	if !exists(caFile) {
		if exists(caKeyFile) {
			return nil, fmt.Errorf("%s exists without %s: remove it, or put the CA's certificate back", caKeyFile, caFile)
		}
		if err := newCA(caFile, caKeyFile, now); err != nil {
			return nil, err
		}
		made = append(made, caFile, caKeyFile)
	}
	var ca *x509.Certificate
	var caKey *ecdsa.PrivateKey
	for _, svc := range services {
		svc = strings.TrimSpace(svc)
		if svc == "" {
			continue
		}
		certFile, keyFile := filepath.Join(dir, svc+".pem"), filepath.Join(dir, svc+"-key.pem")
		if exists(certFile) && exists(keyFile) {
			continue
		}
		if ca == nil {
			var err error
			if ca, caKey, err = loadCA(caFile, caKeyFile); err != nil {
				return nil, err
			}
		}
		if err := newLeaf(certFile, keyFile, svc, ca, caKey, now); err != nil {
			return nil, err
		}
		made = append(made, certFile, keyFile)
	}
	return made, nil
}

func newCA(certFile, keyFile string, now time.Time) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "cqrs local CA (make TLS=1)"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(DefaultValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return fmt.Errorf("create CA certificate: %w", err)
	}
	if err := writeKey(keyFile, key, 0o600); err != nil {
		return err
	}
	return writePEM(certFile, "CERTIFICATE", der, 0o644)
}

func newLeaf(certFile, keyFile, service string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, now time.Time) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate key of %s: %w", service, err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: service},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(DefaultValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{service, "localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("create certificate of %s: %w", service, err)
	}
	if err := writeKey(keyFile, key, 0o644); err != nil {
		return err
	}
	return writePEM(certFile, "CERTIFICATE", der, 0o644)
}

func loadCA(certFile, keyFile string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, nil, fmt.Errorf("read CA: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("read CA key to sign a missing certificate: %w; put the CA's key back, or remove the directory to start afresh", err)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, fmt.Errorf("%s or %s is not PEM", certFile, keyFile)
	}
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("parse %s: %w", certFile, err)
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("parse %s: %w", keyFile, err)
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, nil, fmt.Errorf("%s: want an ECDSA key (as devcerts makes), got %T", keyFile, k)
	}
	return ca, key, nil
}

func writeKey(path string, key *ecdsa.PrivateKey, mode os.FileMode) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return writePEM(path, "PRIVATE KEY", der, mode)
}

// writePEM creates path, failing when it exists: nothing is ever overwritten.
func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := pem.Encode(f, &pem.Block{Type: typ, Bytes: der}); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Chmod(path, mode) // past the umask
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}
