// Package shared locates the team's shared directory (captures, docs) for
// tests and benchmarks. The directory sits beside the repository checkout
// (../shared from the module root) and is absent on a fresh clone, so every
// caller must cope with its absence: tests skip.
package shared

import (
	"os"
	"path/filepath"
	"testing"
)

// Root returns the module root: the nearest directory at or above the
// working directory that holds go.mod, or "" if there is none.
func Root() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Dir returns the shared directory, from $TRACESCHED_SHARED or ../shared
// beside the module root, or "" when it does not exist.
func Dir() string {
	if d := os.Getenv("TRACESCHED_SHARED"); d != "" {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
		return ""
	}
	root := Root()
	if root == "" {
		return ""
	}
	d := filepath.Join(filepath.Dir(root), "shared")
	if fi, err := os.Stat(d); err == nil && fi.IsDir() {
		return d
	}
	return ""
}

// Path returns filepath.Join(Dir(), elem...), skipping tb when the shared
// directory or that path is absent.
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	d := Dir()
	if d == "" {
		tb.Skip("shared directory absent (../shared beside the checkout); skipping")
	}
	p := filepath.Join(append([]string{d}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("%s absent; skipping", p)
	}
	return p
}

// Fixture returns the path of a fixture shipped in the repository under
// fixtures/, failing tb if it is missing (fixtures are part of the repo).
func Fixture(tb testing.TB, elem ...string) string {
	tb.Helper()
	root := Root()
	if root == "" {
		tb.Fatal("module root not found")
	}
	p := filepath.Join(append([]string{root, "fixtures"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("fixture %s missing: %v", p, err)
	}
	return p
}
