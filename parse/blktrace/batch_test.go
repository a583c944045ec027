package blktrace

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// readBatches reads in to its end with ReadEventsInto, n events at a
// time, and returns the events and the error that ended the stream
// (nil at io.EOF).
func readBatches(tb testing.TB, in *Input, n int) ([]trace.Event, error) {
	tb.Helper()
	buf := make([]trace.Event, n)
	var evs []trace.Event
	for {
		k, err := in.ReadEventsInto(buf)
		if k > len(buf) || (err == nil && k != len(buf)) {
			tb.Fatalf("ReadEventsInto = %d, %v for a batch of %d", k, err, len(buf))
		}
		evs = append(evs, buf[:k]...)
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
	}
}

// TestReadEventsIntoMatchesReadEvent: the batched reader returns the
// events ReadEvent does, in batches of any size, on the fixtures (both
// CPU files merged).
func TestReadEventsIntoMatchesReadEvent(t *testing.T) {
	for _, fx := range fixtureNames {
		name := filepath.Join(filepath.Dir(fixtureFile(t, fx, ".blktrace.0.zst")), fx)
		want, _ := openAll(t, name)
		for _, n := range []int{1, 7, 64} {
			in, err := Open(name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readBatches(t, in, n)
			in.Close()
			if err != nil {
				t.Fatalf("%s, batches of %d: %v", fx, n, err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s, batches of %d: %d events, want %d", fx, n, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s, batches of %d: event %d = %+v, want %+v", fx, n, i, got[i], want[i])
				}
			}
		}
	}
}

// TestReadEventsIntoTruncated: a record cut short ends a batch with the
// events before it and the error ReadEvent gives (file and offset), and
// the error is sticky.
func TestReadEventsIntoTruncated(t *testing.T) {
	raw := zstdFile(t, fixtureFile(t, "fx-mqdl-rw-nocg", ".blktrace.0.zst"))
	dir := t.TempDir()
	name := filepath.Join(dir, "cut")
	// 1000 v7 records of 48 bytes and most of a 1001st (those without a
	// payload are 48 bytes; the cut lands inside some record).
	if err := os.WriteFile(name+".blktrace.0", raw[:48*1000+30], 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	var want []trace.Event
	var wantErr error
	for {
		ev, err := in.ReadEvent()
		if err != nil {
			wantErr = err
			break
		}
		want = append(want, ev)
	}
	in.Close()
	if errors.Is(wantErr, io.EOF) || !errors.Is(wantErr, ErrTruncated) || len(want) < 100 {
		t.Fatalf("ReadEvent ended with %v after %d events, want a truncated record after hundreds", wantErr, len(want))
	}
	in, err = Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	got, err := readBatches(t, in, 64)
	if err == nil || err.Error() != wantErr.Error() {
		t.Fatalf("ReadEventsInto ended with %v, want %v", err, wantErr)
	}
	if len(got) != len(want) {
		t.Fatalf("%d events before the error, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if k, err2 := in.ReadEventsInto(make([]trace.Event, 4)); k != 0 || err2 == nil || err2.Error() != wantErr.Error() {
		t.Fatalf("after the error: %d, %v; want 0 and the same error", k, err2)
	}
}
