package report

import (
	"io"
	"testing"

	"github.com/tracesched/tracesched/diff"
)

// BenchmarkNew renders the page of a 1 M-request comparison (Compare not
// counted).
func BenchmarkNew(b *testing.B) {
	real, pred := sides(1_000_000)
	res := diff.Compare(real, pred, diff.Options{})
	b.ResetTimer()
	for b.Loop() {
		if err := New(res, Run{}).WriteHTML(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
