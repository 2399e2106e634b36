package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
)

// FlightTLS is how the api dials one runtime's Flight port: plaintext (the
// default), or TLS verified against CAFile (the system's roots when empty), by
// ServerName (the host of the runtime's address when empty).
type FlightTLS struct {
	Enabled    bool
	CAFile     string
	ServerName string
}

// tlsVarNames are the variables of one runtime's FlightTLS, written out so that
// the docs check finds them.
type tlsVarNames struct{ prefix, on, caFile, serverName string }

var (
	acceleratedTLSVars  = tlsVarNames{"ACCELERATED", "ACCELERATED_FLIGHT_TLS", "ACCELERATED_FLIGHT_TLS_CA_FILE", "ACCELERATED_FLIGHT_TLS_SERVER_NAME"}
	materializedTLSVars = tlsVarNames{"MATERIALIZED", "MATERIALIZED_FLIGHT_TLS", "MATERIALIZED_FLIGHT_TLS_CA_FILE", "MATERIALIZED_FLIGHT_TLS_SERVER_NAME"}
)

// tlsVars are the TLS settings of one runtime, for envVars.
func tlsVars(n tlsVarNames, runtime string, field func(*Config) *FlightTLS) []envVar {
	prefix := n.prefix
	return []envVar{
		{n.on, "false", "true: dial the " + runtime + "'s Flight port with TLS (its spicepod's runtime.tls); false: plaintext",
			func(c *Config, v string) (err error) { field(c).Enabled, err = parseBool(v); return err }},
		{n.caFile, "", "PEM file of the CA that signs the " + runtime + "'s certificate; empty: the system's roots. Needs " + prefix + "_FLIGHT_TLS=true",
			func(c *Config, v string) error { field(c).CAFile = v; return nil }},
		{n.serverName, "", "name the " + runtime + "'s certificate must carry; empty: the host of " + prefix + "_FLIGHT_ADDR",
			func(c *Config, v string) error { field(c).ServerName = v; return nil }},
	}
}

// check refuses TLS settings given while TLS is off, which would otherwise be
// ignored and leave the connection plaintext.
func (t FlightTLS) check(prefix string) error {
	if t.Enabled {
		return nil
	}
	for _, kv := range [][2]string{{"_FLIGHT_TLS_CA_FILE", t.CAFile}, {"_FLIGHT_TLS_SERVER_NAME", t.ServerName}} {
		if kv[1] != "" {
			return fmt.Errorf("%s%s is set but %s_FLIGHT_TLS is not true: set %s_FLIGHT_TLS=true to dial with TLS, or unset %s%s",
				prefix, kv[0], prefix, prefix, prefix, kv[0])
		}
	}
	return nil
}

// clientConfig returns the TLS configuration for the runtime at addr, nil for
// plaintext. Errors name the variable to fix.
func (t FlightTLS) clientConfig(prefix, addr string) (*tls.Config, error) {
	if !t.Enabled {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if cfg.ServerName == "" {
		// A replica is dialled by its IP address: its certificate is checked
		// against the service's name instead.
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("%s_FLIGHT_ADDR=%q: %w", prefix, addr, err)
		}
		cfg.ServerName = host
	}
	if t.CAFile == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(t.CAFile)
	if err != nil {
		return nil, fmt.Errorf("%s_FLIGHT_TLS_CA_FILE=%q: %w; give the PEM file of the CA that signed the runtime's certificate, or leave it empty for the system's roots", prefix, t.CAFile, err)
	}
	cfg.RootCAs = x509.NewCertPool()
	if !cfg.RootCAs.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s_FLIGHT_TLS_CA_FILE=%q holds no PEM certificate; give the PEM file (-----BEGIN CERTIFICATE-----) of the CA that signed the runtime's certificate", prefix, t.CAFile)
	}
	return cfg, nil
}
