package flightsqlsrc

import (
	"crypto/x509"
	"fmt"
	"os"
	"strings"
)

// WithCA returns ep verifying its server against the CA certificates of the
// PEM file at path (param caParam); ep unchanged when path is blank. The file
// is read now, so a wrong path fails at start, naming the param.
func WithCA(ep Endpoint, endpointParam, caParam, path string) (Endpoint, error) {
	path = strings.TrimSpace(path)
	if path == "" {
		return ep, nil
	}
	if !ep.TLS {
		return ep, fmt.Errorf("param %s is set but %s %q is plaintext; write https:// or grpc+tls:// to use TLS, or remove %s",
			caParam, endpointParam, ep.URL, caParam)
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return ep, fmt.Errorf("param %s: read the CA file: %w", caParam, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return ep, fmt.Errorf("param %s: %s holds no PEM certificate (-----BEGIN CERTIFICATE-----)", caParam, path)
	}
	ep.RootCAs = pool
	return ep, nil
}
