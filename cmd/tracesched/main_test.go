package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracesched/tracesched/internal/shared"
)

var update = flag.Bool("update", false, "rewrite golden files")

// run runs the command line and returns stdout, stderr and the exit code.
func run(t *testing.T, args ...string) (string, string, exitCode) {
	t.Helper()
	ios, out, errOut := testStreams()
	code := Main(args, ios)
	return out.String(), errOut.String(), code
}

// golden compares got with testdata/<name>, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (rerun with -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func fixture(t *testing.T, name string) string {
	return filepath.Join(shared.Fixture(t, name), name)
}

func TestStatsGolden(t *testing.T) {
	for _, fx := range []string{"fx-bfq-2cg-w100-900", "fx-mqdl-rw-nocg", "fx-bfq-4seqread"} {
		for _, flags := range [][]string{nil, {"--json"}, {"--by", "device"}} {
			name := "stats." + fx + strings.ReplaceAll(strings.Join(flags, ""), "--", ".") + ".golden"
			t.Run(name, func(t *testing.T) {
				out, errOut, code := run(t, append([]string{"stats", fixture(t, fx)}, flags...)...)
				if code != exitOK {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				golden(t, name, out)
			})
		}
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.txt")
	if err := os.WriteFile(garbage, []byte("this is not a trace\nat all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want exitCode
		msg  string
	}{
		{[]string{"stats"}, exitUsage, "accepts 1 arg"},
		{[]string{"stats", "--bogus", "x"}, exitUsage, "unknown flag"},
		{[]string{"stats", "--by", "nope", "x"}, exitUsage, "--by"},
		{[]string{"stats", filepath.Join(dir, "missing")}, exitError, "missing"},
		{[]string{"stats", garbage}, exitError, "garbage.txt:1"},
	}
	for _, tt := range tests {
		_, errOut, code := run(t, tt.args...)
		if code != tt.want {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tt.args, code, tt.want, errOut)
		}
		if !strings.Contains(errOut, tt.msg) {
			t.Errorf("%v: stderr %q does not mention %q", tt.args, errOut, tt.msg)
		}
	}
}

func TestProgressBarOnlyOnATerminal(t *testing.T) {
	ios, _, errOut := testStreams()
	p := newProgress(ios, "reading")
	p.bytes = func() (int64, int64) { return 50, 100 }
	for i := 0; i < 1<<20; i++ {
		p.Add(1)
	}
	if errOut.Len() != 0 {
		t.Fatalf("progress drawn on a pipe: %q", errOut.String())
	}
	ios.ErrTTY = true
	p = newProgress(ios, "reading")
	p.bytes = func() (int64, int64) { return 50, 100 }
	p.last = p.last.Add(-time.Second) // as if the last draw were long ago
	p.n = 1<<16 - 1
	p.Add(1)
	if got := errOut.String(); !strings.Contains(got, "[===============               ]  50%") || !strings.Contains(got, "65536 events") {
		t.Errorf("progress line %q", got)
	}
	p.Done()
	if !strings.HasSuffix(errOut.String(), "\r\x1b[K") {
		t.Errorf("progress line not erased")
	}
}
