package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/cqrs-spice/cqrs/internal/app/api"
)

// healthcheck is `api healthcheck [--url URL] [--timeout D]`: it exits 0 when URL
// answers 200, 1 otherwise. Docker health checks run it in an image without curl.
func healthcheck(args []string, getenv func(string) string, stderr io.Writer) int {
	var url string
	var timeout time.Duration
	if err := healthcheckFlags(&url, &timeout, getenv, stderr).Parse(args); err != nil {
		return 2
	}
	client := &http.Client{Timeout: timeout}
	resp, err := client.Get(url)
	if err != nil {
		fmt.Fprintf(stderr, "api healthcheck: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "api healthcheck: %s answered %s\n", url, resp.Status)
		return 1
	}
	return 0
}

// healthcheckFlags returns the flag set of `api healthcheck`; getenv gives
// API_ADDR, whose port the default URL takes.
func healthcheckFlags(url *string, timeout *time.Duration, getenv func(string) string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("api healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(url, "url", defaultHealthURL(getenv("API_ADDR")), "URL to probe; the default is /healthz at the port of $API_ADDR on loopback")
	fs.DurationVar(timeout, "timeout", 3*time.Second, "how long to wait for the answer")
	return fs
}

// defaultHealthURL is /healthz on the loopback address at the port of addr
// (API_ADDR, default :9999).
func defaultHealthURL(addr string) string {
	if addr == "" {
		addr = api.DefaultAddr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = "", "9999"
	}
	switch host {
	case "", "0.0.0.0", "::":
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz"
}
