package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/tracesched/tracesched/internal/shared"
)

// fuzzMaxInput bounds the fuzzed capture, so that every run of the four
// commands stays quick.
const fuzzMaxInput = 32 << 10

// fuzzMaxRun bounds one command on such an input: a few milliseconds are
// normal; past this it counts as a hang.
const fuzzMaxRun = 3 * time.Second

// FuzzCommands runs stats, convert, replay and diff end to end on a small
// capture (a per-CPU file, or blkparse text): none may panic or hang, a
// failure exits 1 with a message naming the input, and a failed convert
// leaves no output file.
func FuzzCommands(f *testing.F) {
	for _, s := range []struct{ fx, suffix string }{
		{"fx-mqdl-rw-nocg", ".blktrace.0.zst"},
		{"fx-mqdl-rw-nocg", ".blkparse.txt.zst"},
		{"fx-bfq-2cg-w100-900", ".blktrace.0.zst"},
	} {
		path := filepath.Join(shared.Fixture(f, s.fx), s.fx+s.suffix)
		f.Add(zstdHead(f, path, 6<<10))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > fuzzMaxInput {
			t.Skip()
		}
		dir := t.TempDir()
		in := filepath.Join(dir, "cap.blktrace.0")
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		base := filepath.Join(dir, "cap")
		out := filepath.Join(dir, "req.arrow")
		for _, args := range [][]string{
			{"stats", base},
			{"stats", "--json", base},
			{"convert", base, "-o", out},
			{"replay", "--sched", "none", base},
			{"diff", base, base},
		} {
			ios, _, errOut := testStreams()
			start := time.Now()
			code := Main(args, ios)
			if d := time.Since(start); d > fuzzMaxRun {
				t.Errorf("%v took %v on a %d-byte capture", args, d, len(data))
			}
			switch code {
			case exitOK:
			case exitError:
				if msg := errOut.String(); !strings.Contains(msg, "cap") {
					t.Errorf("%v: exit 1 with %q: the message does not name the input", args, msg)
				}
				if args[0] == "convert" {
					if _, err := os.Stat(out); err == nil {
						t.Errorf("%v failed and left %s", args, out)
					}
				}
			default:
				t.Errorf("%v: exit %d: %s", args, code, errOut.String())
			}
		}
	})
}

// zstdHead returns the first n decompressed bytes of the .zst file path.
func zstdHead(tb testing.TB, path string, n int) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	zr, err := zstd.NewReader(bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	defer zr.Close()
	h, _ := io.ReadAll(io.LimitReader(zr, int64(n)))
	return h
}
