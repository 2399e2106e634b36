package main_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	main "github.com/cqrs-spice/cqrs/cmd/api"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestLoadConfig_Defaults(t *testing.T) {
	c, err := main.LoadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":9999" || c.PostgresURL != main.DefaultPostgresURL || c.PoolSize != 20 ||
		c.AcceleratedAddr != "localhost:50051" || c.MaterializedAddr != "localhost:50052" ||
		c.AcquireTimeout != 5*time.Second || c.RuntimeTimeout != 12*time.Second ||
		c.RequestTimeout != 15*time.Second || c.ShutdownTimeout != 10*time.Second ||
		c.LogLevel != slog.LevelInfo || c.LogFormat != "text" ||
		c.RuntimeProtocol != "flight" || c.DebugAddr != "" {
		t.Fatalf("defaults=%+v", c)
	}
}

func TestLoadConfig_Set(t *testing.T) {
	c, err := main.LoadConfig(env(map[string]string{
		"API_ADDR":                 "127.0.0.1:8080",
		"POSTGRES_POOL_SIZE":       "7",
		"ACCELERATED_FLIGHT_ADDR":  "http://accelerated:50051",
		"MATERIALIZED_FLIGHT_ADDR": "grpc+tcp://materialized:50051/",
		"POSTGRES_ACQUIRE_TIMEOUT": "250ms",
		"API_TRUSTED_PROXIES":      "10.0.0.0/8, 172.16.0.0/12",
		"LOG_LEVEL":                "debug",
		"LOG_FORMAT":               "json",
		"RUNTIME_PROTOCOL":         "flightsql",
		"API_DEBUG_ADDR":           "127.0.0.1:6060",
		"API_WRITE_KEY":            "s3cret",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.PoolSize != 7 || c.AcceleratedAddr != "accelerated:50051" ||
		c.MaterializedAddr != "materialized:50051" || c.AcquireTimeout != 250*time.Millisecond ||
		strings.Join(c.TrustedProxies, " ") != "10.0.0.0/8 172.16.0.0/12" ||
		c.LogLevel != slog.LevelDebug || c.LogFormat != "json" ||
		c.RuntimeProtocol != "flightsql" || c.DebugAddr != "127.0.0.1:6060" || c.WriteKey != "s3cret" {
		t.Fatalf("config=%+v", c)
	}
}

func TestLoadConfig_Errors(t *testing.T) {
	for _, tt := range []struct {
		name, value, want string
	}{
		{"POSTGRES_POOL_SIZE", "0", `POSTGRES_POOL_SIZE="0": want a positive integer`},
		{"POSTGRES_ACQUIRE_TIMEOUT", "5", `POSTGRES_ACQUIRE_TIMEOUT="5": want a positive duration like 5s or 500ms`},
		{"ACCELERATED_FLIGHT_ADDR", "https://accelerated:50051", `ACCELERATED_FLIGHT_ADDR="https://accelerated:50051": want host:port of a Flight endpoint (grpc:// may precede it); for TLS write host:port and set ACCELERATED_FLIGHT_TLS=true`},
		{"MATERIALIZED_FLIGHT_TLS", "yes please", `MATERIALIZED_FLIGHT_TLS="yes please": want true or false`},
		{"ACCELERATED_FLIGHT_TLS_CA_FILE", "/ca.pem", `ACCELERATED_FLIGHT_TLS_CA_FILE is set but ACCELERATED_FLIGHT_TLS is not true: set ACCELERATED_FLIGHT_TLS=true`},
		{"MATERIALIZED_FLIGHT_TLS_SERVER_NAME", "m", `MATERIALIZED_FLIGHT_TLS_SERVER_NAME is set but MATERIALIZED_FLIGHT_TLS is not true`},
		{"MATERIALIZED_FLIGHT_ADDR", "materialized", `MATERIALIZED_FLIGHT_ADDR="materialized": want host:port, like accelerated:50051`},
		{"LOG_LEVEL", "loud", `LOG_LEVEL="loud": want debug, info, warn or error`},
		{"LOG_FORMAT", "xml", `LOG_FORMAT="xml": want text or json`},
		{"RUNTIME_PROTOCOL", "grpc", `RUNTIME_PROTOCOL="grpc": want flight or flightsql`},
	} {
		_, err := main.LoadConfig(env(map[string]string{tt.name: tt.value}))
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s=%s: err=%v, want prefix %q", tt.name, tt.value, err, tt.want)
		}
	}
}

func TestLoadConfig_TLS(t *testing.T) {
	c, err := main.LoadConfig(env(map[string]string{
		"ACCELERATED_FLIGHT_TLS":             "true",
		"ACCELERATED_FLIGHT_TLS_CA_FILE":     "/certs/ca.pem",
		"ACCELERATED_FLIGHT_TLS_SERVER_NAME": "runtime-1",
		"MATERIALIZED_FLIGHT_TLS":            "1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.AcceleratedTLS, (main.FlightTLS{Enabled: true, CAFile: "/certs/ca.pem", ServerName: "runtime-1"}); got != want {
		t.Fatalf("accelerated TLS=%+v, want %+v", got, want)
	}
	if got, want := c.MaterializedTLS, (main.FlightTLS{Enabled: true}); got != want {
		t.Fatalf("materialized TLS=%+v, want %+v", got, want)
	}
	if c, _ := main.LoadConfig(env(nil)); c.AcceleratedTLS.Enabled || c.MaterializedTLS.Enabled {
		t.Fatal("TLS on by default, want plaintext")
	}
}

func TestDefaultHealthURL(t *testing.T) {
	for addr, want := range map[string]string{
		"":               "http://127.0.0.1:9999/healthz",
		":9999":          "http://127.0.0.1:9999/healthz",
		"0.0.0.0:8080":   "http://127.0.0.1:8080/healthz",
		"[::]:8080":      "http://127.0.0.1:8080/healthz",
		"10.1.2.3:80":    "http://10.1.2.3:80/healthz",
		"localhost:7000": "http://localhost:7000/healthz",
	} {
		if got := main.DefaultHealthURL(addr); got != want {
			t.Errorf("DefaultHealthURL(%q)=%q, want %q", addr, got, want)
		}
	}
}

func TestHealthcheck(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
	}))
	defer srv.Close()
	var stderr bytes.Buffer
	if code := main.Healthcheck([]string{"--url", srv.URL + "/healthz"}, env(nil), &stderr); code != 0 {
		t.Fatalf("exit=%d, want 0: %s", code, &stderr)
	}
	status = http.StatusServiceUnavailable
	if code := main.Healthcheck([]string{"--url", srv.URL + "/healthz"}, env(nil), &stderr); code != 1 {
		t.Fatalf("exit=%d, want 1", code)
	}
	if want := "answered 503 Service Unavailable"; !strings.Contains(stderr.String(), want) {
		t.Fatalf("stderr=%q, want it to contain %q", &stderr, want)
	}
	srv.Close()
	if code := main.Healthcheck([]string{"-url", srv.URL}, env(nil), &stderr); code != 1 {
		t.Fatalf("exit=%d for a closed server, want 1", code)
	}
}

func TestRun_Help(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := main.Run([]string{"--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit=%d, want 0", code)
	}
	for _, name := range []string{"API_ADDR", "POSTGRES_URL", "POSTGRES_POOL_SIZE", "ACCELERATED_FLIGHT_ADDR", "MATERIALIZED_FLIGHT_ADDR", "healthcheck"} {
		if !strings.Contains(stdout.String(), name) {
			t.Errorf("--help does not mention %s", name)
		}
	}
	if code := main.Run([]string{"--bogus"}, &stdout, &stderr); code != 2 {
		t.Fatalf("exit=%d for an unknown argument, want 2", code)
	}
}
