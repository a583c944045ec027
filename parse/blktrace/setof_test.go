package blktrace

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSetOf(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"sda.blktrace.0", "sda.blktrace.1.zst", "other.bin"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sub := filepath.Join(dir, "only")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "sdb.blktrace.3.gz"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "sda")
	for name, want := range map[string]string{
		filepath.Join(dir, "sda.blktrace.0"):     base,
		filepath.Join(dir, "sda.blktrace.1.zst"): base,
		base:                                     base,
		base + "/":                               base,
		filepath.Join(dir, "other.bin"):          filepath.Join(dir, "other.bin"),
		sub:                                      filepath.Join(sub, "sdb"),
		dir:                                      base, // one set beside another file: Open opens the set
		"-":                                      "-",
	} {
		if got := SetOf(name); got != want {
			t.Errorf("SetOf(%q) = %q, want %q", name, got, want)
		}
	}
}
