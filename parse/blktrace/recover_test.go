package blktrace

import (
	"errors"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// panicSource yields two events, then panics as a reader defect would (an
// index out of range), at the record its positionError names.
type panicSource struct{ n int }

func (s *panicSource) next(ev *trace.Event) error {
	s.n++
	if s.n == 3 {
		var rec []byte
		_ = rec[s.n] // the defect
	}
	*ev = trace.Event{Time: trace.Time(s.n) * 1000, Action: trace.ActionQueue, Sector: uint64(s.n)}
	return nil
}

func (s *panicSource) positionError(err error) error {
	return &FormatError{File: "sda.blktrace.0", Offset: 96, Seq: 2, Err: err}
}

// TestPanicBecomesPositionedError: a panic inside a reader ends the stream
// with a sticky error naming the file and the offset of the record last
// read, not a crash.
func TestPanicBecomesPositionedError(t *testing.T) {
	p := pipeline{src: &panicSource{}}
	var ev trace.Event
	for i := 0; i < 2; i++ {
		if err := p.next(&ev); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	err := p.next(&ev)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.File != "sda.blktrace.0" || fe.Offset != 96 {
		t.Fatalf("error %v (%T), want a *FormatError at sda.blktrace.0 offset 96", err, err)
	}
	if !strings.Contains(err.Error(), "index out of range") || !strings.Contains(err.Error(), "offset 0x60") {
		t.Fatalf("error %q does not say what failed and where", err)
	}
	if again := p.next(&ev); again != err {
		t.Fatalf("after the panic: %v, want the same sticky error", again)
	}
}
