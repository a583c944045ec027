package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestProfileFlags: --cpuprofile and --memprofile each write a pprof
// profile (gzip-compressed protocol buffers) when the command succeeds.
func TestProfileFlags(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	if _, errOut, code := run(t, "stats", "--cpuprofile", cpu, "--memprofile", mem, fixture(t, "fx-mqdl-rw-nocg")); code != exitOK {
		t.Fatalf("stats: exit %d: %s", code, errOut)
	}
	for _, p := range []string{cpu, mem} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
			t.Errorf("%s: %d bytes, not a gzip-compressed profile", filepath.Base(p), len(b))
		}
	}
}
