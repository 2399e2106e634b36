package parsetree_test

import (
	"testing"

	"github.com/cqrs-spice/cqrs/internal/runtime/accelerator/duckdb/parsetree"
)

// The costs of the planner's steps on the recipe's view: decoding DuckDB's
// tree, encoding it for printing, and cloning it.
func BenchmarkRecipeView(b *testing.B) {
	js := corpusEntry(b, "with a as (SELECT products.id").json
	s := mustDecode(b, js)
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(js)))
		for b.Loop() {
			if _, err := parsetree.Decode(js); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(js)))
		for b.Loop() {
			mustEncode(b, s)
		}
	})
	b.Run("clone", func(b *testing.B) {
		for b.Loop() {
			parsetree.CloneStatement(s)
		}
	})
}
