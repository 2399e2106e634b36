package spicepod_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

func TestUnresolvedSecretHint(t *testing.T) {
	for _, tt := range []struct {
		ref           string
		want, notWant string
	}{
		{"${ secrets:SPICE_PG_PASS }", "set SPICE_PG_PASS in the environment", "SPICE_SPICE_"},
		{"${env:spice_pg_pass}", "set SPICE_PG_PASS in the environment", "SPICE_SPICE_"},
		{"${secrets:pg_pass}", "set SPICE_PG_PASS or PG_PASS in the environment", "SPICE_SPICE_"},
	} {
		pod := "version: v1\nkind: Spicepod\nname: t\ndatasets:\n  - from: postgres:public.orders\n    name: orders\n    params:\n      pg_pass: " + tt.ref + "\n"
		_, err := spicepod.Parse([]byte(pod), "spicepod.yaml", nil)
		if !errors.Is(err, spicepod.ErrUnresolved) {
			t.Fatalf("%s: err = %v, want ErrUnresolved", tt.ref, err)
		}
		if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, tt.notWant) {
			t.Errorf("%s: %q, want it to contain %q and not %q", tt.ref, msg, tt.want, tt.notWant)
		}
	}
}

func TestSpiceAIPathForm(t *testing.T) {
	pod, err := spicepod.Load("testdata/valid/spiceai-path.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	scheme, path := pod.Datasets[0].Connector()
	if scheme != "spice.ai" || path != "spiceai/quickstart/datasets/taxi_trips" {
		t.Errorf("Connector() = %q, %q, want spice.ai, spiceai/quickstart/datasets/taxi_trips", scheme, path)
	}
	for _, tt := range []struct{ from, want, notWant string }{
		{"spice.ai/", "names no dataset", ""},
		{"files/taxi.csv", "spice.ai/<org>/<app>/datasets/<dataset>", "postgres:public.files/taxi.csv"},
		{"orders", "e.g. postgres:public.orders", ""},
	} {
		doc := "version: v1\nkind: Spicepod\nname: t\ndatasets:\n  - from: " + tt.from + "\n    name: d\n"
		_, err := spicepod.Parse([]byte(doc), "spicepod.yaml", nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.notWant != "" && strings.Contains(err.Error(), tt.notWant)) {
			t.Errorf("from %q: err = %v, want one containing %q", tt.from, err, tt.want)
		}
	}
}

func TestQualifiedNames(t *testing.T) {
	pod, err := spicepod.Load("testdata/valid/qualified-names.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range pod.Datasets {
		got = append(got, d.Name)
	}
	for _, v := range pod.Views {
		got = append(got, v.Name)
	}
	want := []string{"spiceai.files", "Sales.Customer", "orders", "reports.customers"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("names = %q, want %q (public is the default schema)", got, want)
	}
	if q := pod.Datasets[1].Acceleration.RefreshQuery(); q.Limit != 100 || q.OrderBy != "id" {
		t.Errorf("refresh_sql of Sales.Customer = %+v, want ORDER BY id LIMIT 100", q)
	}
}
