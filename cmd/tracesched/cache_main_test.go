package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestMain points the cache of fitted device models (os.UserCacheDir) at a
// temporary directory, so that the tests neither read nor fill the user's.
func TestMain(m *testing.M) {
	// A child process of the signal tests: the test binary is tracesched.
	if os.Getenv("TRACESCHED_TEST_MAIN") == "1" {
		os.Args = append([]string{"tracesched"}, strings.Fields(os.Getenv("TRACESCHED_TEST_ARGS"))...)
		os.Exit(int(runMain()))
	}
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
