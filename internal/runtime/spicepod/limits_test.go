package spicepod_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/spicepod"
)

const hostileHead = "version: v1\nkind: Spicepod\nname: hostile\n"

// billionLaughs nests levels lists of ten aliases each: 10^levels nodes
// expanded from a file of a few hundred bytes.
func billionLaughs(levels int) string {
	var b strings.Builder
	b.WriteString(hostileHead + "datasets:\n  - from: postgres:public.orders\n    name: orders\n    params:\n")
	b.WriteString("      l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "      l%d: &l%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// unknownKeys is a dataset with n unknown keys.
func unknownKeys(n int) string {
	var b strings.Builder
	b.WriteString(hostileHead + "datasets:\n  - from: postgres:public.orders\n    name: orders\n")
	for i := range n {
		fmt.Fprintf(&b, "    junk_%d: x\n", i)
	}
	return b.String()
}

// maxPlainBytes is spicepod.MaxFileBytes less a margin: a file refused for
// its nodes, not its size.
const maxPlainBytes = spicepod.MaxFileBytes - 1024

// plainKeys is a spicepod of about size bytes, most of them short keys
// under one mapping, no alias among them.
func plainKeys(size int) string {
	var b strings.Builder
	b.WriteString(hostileHead + "x:\n")
	for i := 0; b.Len() < size-16; i++ {
		fmt.Fprintf(&b, "  k%d: 1\n", i)
	}
	return b.String()
}

// hostilePods are YAML documents built to exhaust a parser (self-referring
// anchors, alias bombs, floods of keys) and their neighbours. FuzzParse starts
// from them too.
var hostilePods = []struct {
	name string
	doc  string
	want []string
}{
	{"merge of its own anchor", hostileHead + "datasets:\n  - from: postgres:public.orders\n    name: orders\n    params: &p {pg_host: h, <<: *p}\n",
		[]string{"line 7", "anchor &p refers to itself", "*p"}},
	{"list holding its own anchor", hostileHead + "datasets: &d [*d]\n",
		[]string{"line 4", "anchor &d refers to itself"}},
	{"merge of an anchor that merges it back", hostileHead + "a: &a {x: 1, <<: *b}\nb: &b {y: 2, <<: *a}\n",
		[]string{"unknown anchor 'b'"}},
	{"billion laughs", billionLaughs(9),
		[]string{"expand to more than 100000 YAML nodes", "alias bomb"}},
	{"a megabyte of plain keys", plainKeys(maxPlainBytes),
		[]string{"more than 100000 YAML nodes", "configuration only"}},
	{"many unknown keys", unknownKeys(5000),
		[]string{"junk_0: unknown key", "...and 4980 more problems"}},
	{"long unknown key", hostileHead + "? " + strings.Repeat("k", 10000) + "\n: 1\n",
		[]string{"kkkk... (10000 bytes): unknown key"}},
}

func TestParse_Hostile(t *testing.T) {
	for _, tt := range hostilePods {
		t.Run(tt.name, func(t *testing.T) {
			pod, err := spicepod.Parse([]byte(tt.doc), "hostile.yaml", lookup)
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", pod)
			}
			if !errors.Is(err, spicepod.ErrInvalid) {
				t.Errorf("error %q does not match ErrInvalid", err)
			}
			msg := err.Error()
			for _, want := range tt.want {
				if !strings.Contains(msg, want) {
					t.Errorf("error %.500q\ndoes not contain %q", msg, want)
				}
			}
			if got, max := strings.Count(msg, "\n")+1, spicepod.MaxErrors+1; got > max {
				t.Errorf("error has %d lines, want at most %d", got, max)
			}
			if got, max := len(msg), 16<<10; got > max {
				t.Errorf("error is %d bytes, want at most %d", got, max)
			}
		})
	}
}

func TestParse_SharedAnchorsStillWork(t *testing.T) {
	doc := hostileHead + `datasets:
  - from: postgres:public.orders
    name: orders
    params:
      <<: &pg {pg_host: db, pg_user: u}
      pg_db: shop
  - from: postgres:public.products
    name: products
    params: *pg
`
	pod, err := spicepod.Parse([]byte(doc), "shared.yaml", lookup)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "orders params", pod.Datasets[0].Params, map[string]string{"pg_host": "db", "pg_user": "u", "pg_db": "shop"})
	equal(t, "products params", pod.Datasets[1].Params, map[string]string{"pg_host": "db", "pg_user": "u"})
}

func TestLoadAndParse_RefuseLargeFiles(t *testing.T) {
	big := hostileHead + "# " + strings.Repeat("x", spicepod.MaxFileBytes) + "\n"
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	_, loadErr := spicepod.Load(path, lookup)
	_, parseErr := spicepod.Parse([]byte(big), path, lookup)
	for name, err := range map[string]error{"Load": loadErr, "Parse": parseErr} {
		if err == nil {
			t.Fatalf("%s succeeded, want an error", name)
		}
		want := fmt.Sprintf("%s: the file is %d bytes, over the limit of %d bytes (1 MiB)", path, len(big), spicepod.MaxFileBytes)
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s error %q does not contain %q", name, err, want)
		}
		if !errors.Is(err, spicepod.ErrInvalid) {
			t.Errorf("%s error %q does not match ErrInvalid", name, err)
		}
	}
}
