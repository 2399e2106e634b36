package flightsqlsrc

import (
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// Dataset params this connector reads. Any other param starting with
// "flightsql_" is an error, so a typo never silently falls back to a default.
const (
	ParamEndpoint = "flightsql_endpoint"
	ParamUsername = "flightsql_username"
	ParamPassword = "flightsql_password"
	// ParamTLSCA is a PEM file of the CAs that sign the endpoint's certificate,
	// for a TLS endpoint whose certificate the system's roots do not verify.
	ParamTLSCA = "flightsql_tls_ca_certificate_file"
)

var knownParams = []string{ParamEndpoint, ParamUsername, ParamPassword, ParamTLSCA}

// Config is a flightsql dataset's connection settings, built by ParseParams.
type Config struct {
	Endpoint Endpoint
	// Username and Password, when Username or Password is set, are sent in a Basic
	// handshake whose bearer token authorizes every later call.
	Username string
	Password string
}

// CheckParams refuses params with prefix that the connector does not read (a
// misspelt param would otherwise be ignored), naming them and the known ones.
func CheckParams(params map[string]string, prefix, connector string, known []string) error {
	var unknown []string
	for k := range params {
		if strings.HasPrefix(k, prefix) && !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return fmt.Errorf("params %s: unknown to the %s connector; it reads %s", strings.Join(unknown, ", "), connector, strings.Join(known, ", "))
}

// ParseParams validates a dataset's params and builds its Config. Every error
// names the param and says what to write.
func ParseParams(params map[string]string) (Config, error) {
	if err := CheckParams(params, "flightsql_", "flightsql", knownParams); err != nil {
		return Config{}, err
	}
	raw := params[ParamEndpoint]
	if strings.TrimSpace(raw) == "" {
		return Config{}, fmt.Errorf("param %s is required; write the upstream runtime's Flight address, e.g. http://localhost:50051", ParamEndpoint)
	}
	ep, err := ParseEndpoint(raw)
	if err != nil {
		return Config{}, fmt.Errorf("param %s: %w", ParamEndpoint, err)
	}
	if ep, err = WithCA(ep, ParamEndpoint, ParamTLSCA, params[ParamTLSCA]); err != nil {
		return Config{}, err
	}
	return Config{Endpoint: ep, Username: params[ParamUsername], Password: params[ParamPassword]}, nil
}

// Endpoint is where a Flight server listens.
type Endpoint struct {
	// URL is the endpoint as written, for messages.
	URL string
	// Target is host:port, as gRPC dials it.
	Target string
	// TLS is true for https:// and grpc+tls:// (verified against RootCAs, or
	// the system's roots when nil), false for http://, grpc://, grpc+tcp:// and
	// a bare host:port.
	TLS     bool
	RootCAs *x509.CertPool
}

func (e Endpoint) String() string { return e.URL }

// ParseEndpoint reads "http://host:port" (plaintext), "https://host[:port]" (TLS),
// the Arrow Flight schemes grpc://, grpc+tcp:// and grpc+tls://, or a bare
// "host:port" (plaintext). A missing port is 80 for plaintext and 443 for TLS.
func ParseEndpoint(s string) (Endpoint, error) {
	s = strings.TrimSpace(s)
	hint := "write http://host:50051 (plaintext) or https://host (TLS)"
	if !strings.Contains(s, "://") {
		host, port, err := net.SplitHostPort(s)
		if err != nil || host == "" || port == "" {
			return Endpoint{}, fmt.Errorf("%q is not an endpoint; %s", s, hint)
		}
		return Endpoint{URL: s, Target: s}, nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" {
		return Endpoint{}, fmt.Errorf("%q is not an endpoint; %s", s, hint)
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		return Endpoint{}, fmt.Errorf("%q has a path or query, which Flight endpoints do not take; %s", s, hint)
	}
	var tls bool
	switch strings.ToLower(u.Scheme) {
	case "http", "grpc", "grpc+tcp":
	case "https", "grpc+tls":
		tls = true
	default:
		return Endpoint{}, fmt.Errorf("%q: scheme %s is not supported; %s", s, u.Scheme, hint)
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if tls {
			port = "443"
		}
	}
	return Endpoint{URL: s, Target: net.JoinHostPort(u.Hostname(), port), TLS: tls}, nil
}
