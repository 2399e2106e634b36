package flightsrv

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// FuzzDecodeTicket feeds the statement handles a client sends back (DoGet
// tickets and bound prepared statement handles) to their decoders: they must
// refuse with an error, never panic, and release every byte they allocate.
// Run with `make fuzz` or `go test -fuzz=FuzzDecodeTicket ./internal/runtime/server/flightsrv/`.
func FuzzDecodeTicket(f *testing.F) {
	id := bytes.Repeat([]byte{'i'}, idLen)
	for _, sql := range []string{"select 1", "select 1 as a; create table pwn as select 42 as y", ""} {
		f.Add(encodeTicket(string(id), kindSQL, []byte(sql)))
	}
	params := mustParams(f)
	f.Add(encodeTicket(string(id), kindPrepared, append(append([]byte(nil), id...), params...)))
	f.Add(encodeTicket(string(id), kindPrepared, append(append([]byte(nil), id...), params[:len(params)/2]...)))
	f.Add(encodeTicket(string(id), 'x', nil))
	f.Add([]byte{})
	f.Add(id)
	f.Fuzz(func(t *testing.T, b []byte) {
		gotID, kind, payload, err := decodeTicket(b)
		if err != nil {
			return
		}
		if got := encodeTicket(gotID, kind, payload); !bytes.Equal(got, b) {
			t.Fatalf("ticket %q decodes to %q/%q/%q, which encodes to %q", b, gotID, kind, payload, got)
		}
		if kind != kindPrepared || len(payload) <= idLen {
			return
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		_, _ = decodeParams(payload[idLen:], mem)
		if n := mem.CurrentAlloc(); n != 0 {
			t.Fatalf("decodeParams(%q) leaked %d bytes", payload[idLen:], n)
		}
	})
}

func mustParams(tb testing.TB) []byte {
	tb.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "p", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(1)
	b.Field(1).(*array.StringBuilder).Append("x")
	rec := b.NewRecordBatch()
	defer rec.Release()
	out, err := encodeParams(rec, memory.DefaultAllocator)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
