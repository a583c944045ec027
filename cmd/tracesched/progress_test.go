package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 14 item 3: a long replay off a terminal printed nothing and looked
// hung. With --progress, or with stderr a regular file, progress comes as
// plain lines, at most one every lineEvery, with no terminal control.
func TestProgressLinesOffATerminal(t *testing.T) {
	ios, _, errOut := testStreams()
	ios.Progress = true
	p := newProgress(ios, "replay")
	p.bytes = func() (int64, int64) { return 25, 100 }
	p.last = p.last.Add(-lineEvery) // as if the last line were long ago
	p.n = 1<<16 - 1
	p.Add(1)
	for i := 0; i < 1<<18; i++ { // within lineEvery: no more lines
		p.Add(1)
	}
	p.Done()
	got := errOut.String()
	if strings.Count(got, "\n") != 1 || !strings.Contains(got, "tracesched: replay: 65536 events") || !strings.Contains(got, "25% of the input read") {
		t.Errorf("progress lines %q: want one line with the count and the share read", got)
	}
	if strings.ContainsAny(got, "\r\x1b") {
		t.Errorf("terminal control in progress lines %q", got)
	}

	// A regular file as stderr turns the lines on without the flag.
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !isRegular(f) {
		t.Errorf("isRegular(a file) = false")
	}
	ios2, _, _ := testStreams()
	ios2.ErrFile = true
	if p := newProgress(ios2, "x"); !p.enabled || !p.lines {
		t.Errorf("stderr a file: progress enabled %v lines %v, want both", p.enabled, p.lines)
	}
	// A pipe without --progress stays silent.
	ios3, _, _ := testStreams()
	if p := newProgress(ios3, "x"); p.enabled {
		t.Errorf("progress enabled on a pipe without --progress")
	}
}

// A phase that reads no events still says it is alive off a terminal.
func TestHeartbeatLines(t *testing.T) {
	ios, _, errOut := testStreams()
	heartbeat(ios, "x")() // a pipe without --progress: nothing
	if errOut.Len() != 0 {
		t.Fatalf("heartbeat on a pipe: %q", errOut.String())
	}
	ios.Progress = true
	stop := heartbeat(ios, "calibrating")
	stop()
	if errOut.Len() != 0 { // stopped before its first tick
		t.Errorf("heartbeat wrote %q before lineEvery", errOut.String())
	}
	stop = heartbeatEvery(ios, "calibrating", 10*time.Millisecond)
	time.Sleep(35 * time.Millisecond)
	stop()
	n := strings.Count(errOut.String(), "tracesched: calibrating: ")
	if n < 1 || strings.Count(errOut.String(), "\n") != n {
		t.Errorf("heartbeat lines %q: want one line per tick", errOut.String())
	}
	after := errOut.Len()
	time.Sleep(25 * time.Millisecond)
	if errOut.Len() != after {
		t.Errorf("heartbeat wrote after stop")
	}
}
