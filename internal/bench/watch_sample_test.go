package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/cqrs-spice/cqrs/internal/bench"
	"github.com/cqrs-spice/cqrs/internal/position"
)

// Every n-th write offered while open is traced; the others are not.
func TestWatchSamplesWrites(t *testing.T) {
	w := bench.NewWatch(bench.NewClient("", 1, time.Second), nil, time.Now(), 1, 3)
	w.Read(bench.Write{Token: 99}) // not open yet: ignored
	w.Open()
	for i := 1; i <= 10; i++ {
		w.Read(bench.Write{Token: position.LSN(0x100 + 0x10*i)})
	}
	got, _ := w.Close(context.Background())
	if len(got) != 4 {
		t.Fatalf("traced %d writes, want 4 (the 1st, 4th, 7th and 10th)", len(got))
	}
	for i, want := range []int{1, 4, 7, 10} {
		if got[i].Token != position.LSN(0x100+0x10*want) {
			t.Fatalf("traced[%d]=%s, want write %d", i, got[i].Token, want)
		}
	}
}
