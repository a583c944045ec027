package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// addProfileFlag adds the hidden --cpuprofile FILE: a CPU profile of the
// whole command (for `go tool pprof`), written when the command returns.
// A developer's flag, not in the help.
func addProfileFlag(root *cobra.Command) {
	var path string
	var f *os.File
	pf := root.PersistentFlags()
	pf.StringVar(&path, "cpuprofile", "", "write a CPU profile of the command to `FILE`")
	_ = pf.MarkHidden("cpuprofile")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if path == "" {
			return nil
		}
		var err error
		if f, err = os.Create(path); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("--cpuprofile %s: %w", path, err)
		}
		return nil
	}
	// Only a command that succeeds writes its profile (cobra skips the
	// post-run hooks after an error).
	root.PersistentPostRunE = func(*cobra.Command, []string) error {
		if f == nil {
			return nil
		}
		pprof.StopCPUProfile()
		return f.Close()
	}
}
