package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain points the cache of fitted device models (os.UserCacheDir) at a
// temporary directory, so that the tests neither read nor fill the user's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tracesched-cache")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	os.Setenv("HOME", dir) // os.UserCacheDir on darwin
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
