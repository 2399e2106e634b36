package postgres_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/runtime/connector/postgres"
)

// clearPGEnv keeps libpq environment variables of the machine out of the test.
func clearPGEnv(t *testing.T) {
	for _, k := range []string{"PGHOST", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD", "PGSSLMODE",
		"PGSSLROOTCERT", "PGCONNECT_TIMEOUT", "PGAPPNAME", "PGSERVICE"} {
		t.Setenv(k, "")
	}
}

func TestParseParams(t *testing.T) {
	clearPGEnv(t)
	base := map[string]string{"pg_host": "db.local", "pg_db": "shop", "pg_user": "app", "pg_pass": "secret"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	type want struct {
		host, db, user, pass string
		port                 uint16
		tls                  bool // first attempt uses TLS
		plainFallback        bool // then plain TCP
		verify               bool // certificate checked
		pool                 int32
	}
	for _, tc := range []struct {
		name   string
		params map[string]string
		want   want
	}{
		{"Defaults", base,
			want{host: "db.local", db: "shop", user: "app", pass: "secret", port: 5432, tls: true, plainFallback: true, pool: 5}},
		{"Port and pool", with(map[string]string{"pg_port": "6543", "connection_pool_size": "12"}),
			want{host: "db.local", db: "shop", user: "app", pass: "secret", port: 6543, tls: true, plainFallback: true, pool: 12}},
		{"Disable", with(map[string]string{"pg_sslmode": "disable"}),
			want{host: "db.local", db: "shop", user: "app", pass: "secret", port: 5432, pool: 5}},
		{"Require", with(map[string]string{"pg_sslmode": "require"}),
			want{host: "db.local", db: "shop", user: "app", pass: "secret", port: 5432, tls: true, pool: 5}},
		{"VerifyFull", with(map[string]string{"pg_sslmode": "verify-full"}),
			want{host: "db.local", db: "shop", user: "app", pass: "secret", port: 5432, tls: true, verify: true, pool: 5}},
		{"URL alone", map[string]string{"pg_connection_string": "postgres://u:p%40ss@h1:6000/orders?sslmode=disable&pool_max_conns=7"},
			want{host: "h1", db: "orders", user: "u", pass: "p@ss", port: 6000, pool: 7}},
		{"URL under params", map[string]string{
			"pg_connection_string": "postgres://u:p@h1:6000/orders?sslmode=disable&pool_max_conns=7",
			"pg_host":              "h2", "pg_pass": "new pass&x=1", "pg_sslmode": "require", "connection_pool_size": "3"},
			want{host: "h2", db: "orders", user: "u", pass: "new pass&x=1", port: 6000, tls: true, pool: 3}},
		{"Keyword/value under params", map[string]string{
			"pg_connection_string": "host=h1 port=6000 dbname=orders user=u password=p sslmode=disable",
			"pg_db":                "other", "pg_pass": `it's a \ password`},
			want{host: "h1", db: "other", user: "u", pass: `it's a \ password`, port: 6000, pool: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := postgres.ParseParams(tc.params)
			if err != nil {
				t.Fatalf("ParseParams: %v", err)
			}
			cc := cfg.PoolConfig.ConnConfig
			got := want{
				host: cc.Host, db: cc.Database, user: cc.User, pass: cc.Password, port: cc.Port,
				tls:           cc.TLSConfig != nil,
				plainFallback: len(cc.Fallbacks) == 1 && cc.Fallbacks[0].TLSConfig == nil,
				verify:        cc.TLSConfig != nil && !cc.TLSConfig.InsecureSkipVerify,
				pool:          cfg.PoolSize,
			}
			if got != tc.want {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
			if got, want := cc.ConnectTimeout, postgres.DefaultConnectTimeout; got != want {
				t.Errorf("connect timeout=%v, want %v", got, want)
			}
		})
	}
}

func TestParseParamsDetails(t *testing.T) {
	clearPGEnv(t)
	cfg := mustConfig(t, map[string]string{
		"pg_connection_string": "postgres://u@h/db?connect_timeout=3",
		"pg_replication_slot":  "runtime_1", "pg_publication": "shop",
		"file_format": "not ours", // params without the pg_ prefix belong to others
	})
	if got, want := cfg.PoolConfig.ConnConfig.ConnectTimeout, 3*time.Second; got != want {
		t.Errorf("connect timeout=%v, want %v", got, want)
	}
	if cfg.ReplicationSlot != "runtime_1" || cfg.Publication != "shop" {
		t.Errorf("slot=%q publication=%q, want runtime_1 and shop", cfg.ReplicationSlot, cfg.Publication)
	}
	if got, want := cfg.PoolConfig.ConnConfig.RuntimeParams["application_name"], postgres.DefaultApplicationName; got != want {
		t.Errorf("application_name=%q, want %q", got, want)
	}
}

func TestParseParamsErrors(t *testing.T) {
	clearPGEnv(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := map[string]string{"pg_host": "h", "pg_db": "d", "pg_user": "u"}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for k, v := range ok {
			if _, set := m[k]; !set {
				m[k] = v
			}
		}
		return m
	}
	for _, tc := range []struct {
		name   string
		params map[string]string
		want   []string // substrings of the message
		hidden string   // must not appear
	}{
		{"bad sslmode", with("pg_sslmode", "verify"), []string{"pg_sslmode", `"verify"`, "disable, require, prefer, verify-ca, verify-full"}, ""},
		{"port not a number", with("pg_port", "five"), []string{"pg_port", `"five"`, "1 to 65535"}, ""},
		{"port zero", with("pg_port", "0"), []string{"pg_port", "1 to 65535"}, ""},
		{"port too big", with("pg_port", "70000"), []string{"pg_port", "1 to 65535"}, ""},
		{"unknown param", with("pg_hots", "h"), []string{"unknown param pg_hots", "pg_host"}, ""},
		{"pool size", with("connection_pool_size", "0"), []string{"connection_pool_size", "at least 1"}, ""},
		{"pool size not a number", with("connection_pool_size", "many"), []string{"connection_pool_size", `"many"`}, ""},
		{"missing host", map[string]string{"pg_db": "d", "pg_user": "u"}, []string{"pg_host is required", "pg_connection_string"}, ""},
		{"missing db", map[string]string{"pg_host": "h", "pg_user": "u"}, []string{"pg_db is required"}, ""},
		{"empty user", with("pg_user", ""), []string{"pg_user is required"}, ""},
		{"empty host beside a connection string", map[string]string{"pg_connection_string": "host=h", "pg_host": ""}, []string{"pg_host is empty"}, ""},
		{"root cert missing", with("pg_sslrootcert", "/no/such/ca.pem"), []string{"pg_sslrootcert", "/no/such/ca.pem"}, ""},
		{"root cert not PEM", map[string]string{"pg_host": "h", "pg_db": "d", "pg_user": "u", "pg_sslmode": "verify-full", "pg_sslrootcert": ca}, []string{"pg_sslrootcert", "no PEM certificate"}, ""},
		{"bad connection string", map[string]string{"pg_connection_string": "host=h password=topsecret port=abc"}, []string{"pg_connection_string", "invalid port"}, "topsecret"},
		{"bad URL", map[string]string{"pg_connection_string": "postgres://u:topsecret@h:abc/db"}, []string{"pg_connection_string"}, "topsecret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := postgres.ParseParams(tc.params)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err=%q, want it to mention %q", err, w)
				}
			}
			if tc.hidden != "" && strings.Contains(err.Error(), tc.hidden) {
				t.Errorf("err=%q shows the password", err)
			}
		})
	}
}

func TestParseTable(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string // nil: an error
	}{
		{"orders", []string{"orders"}},
		{"public.orders", []string{"public", "orders"}},
		{"Public.Orders", []string{"public", "orders"}},
		{`"Sales"."Order Lines"`, []string{"Sales", "Order Lines"}},
		{`"a.b"`, []string{"a.b"}},
		{`"say ""hi"""`, []string{`say "hi"`}},
		{"", nil},
		{"a.b.c", nil},
		{"a.", nil},
		{`"open`, nil},
		{"two words", nil},
	} {
		got, err := postgres.ParseTable(tc.in)
		if tc.want == nil {
			if err == nil {
				t.Errorf("%q: got %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%q: got %v, %v, want %v", tc.in, got, err, tc.want)
		}
	}
}
