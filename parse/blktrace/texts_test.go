package blktrace

import (
	"fmt"
	"strings"
	"testing"
)

// TestTextArena: strings made over several chunks keep their bytes as
// more are made and as the source buffer is reused.
func TestTextArena(t *testing.T) {
	var a textArena
	buf := make([]byte, 0, textChunk)
	var got, want []string
	for i := range 5000 {
		w := fmt.Sprintf("bfq%dS dispatched %d sectors", i, i*8)
		if i%1000 == 999 {
			w = strings.Repeat("x", textChunk/8+1) // its own string
		}
		buf = append(buf[:0], w...)
		got = append(got, a.string(buf))
		want = append(want, w)
		clear(buf[:cap(buf)])
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("text %d: %.40q, want %.40q", i, got[i], want[i])
		}
	}
	if s := a.string(nil); s != "" {
		t.Errorf("empty text: %q", s)
	}
}
