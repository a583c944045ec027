package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// addProfileFlag adds the hidden --cpuprofile FILE, a CPU profile of the
// whole command, and --memprofile FILE, its allocations (bytes and objects
// allocated since the start, and those still live), both for `go tool
// pprof` and written when the command returns. Developers' flags, not in
// the help.
func addProfileFlag(root *cobra.Command) {
	var cpuPath, memPath string
	var f *os.File
	rate := runtime.MemProfileRate
	pf := root.PersistentFlags()
	pf.StringVar(&cpuPath, "cpuprofile", "", "write a CPU profile of the command to `FILE`")
	pf.StringVar(&memPath, "memprofile", "", "write an allocation profile of the command to `FILE`")
	_ = pf.MarkHidden("cpuprofile")
	_ = pf.MarkHidden("memprofile")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if memPath != "" {
			// One sample per 64 KiB allocated: fine enough to count bytes.
			runtime.MemProfileRate = 64 << 10
		}
		if cpuPath == "" {
			return nil
		}
		var err error
		if f, err = os.Create(cpuPath); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("--cpuprofile %s: %w", cpuPath, err)
		}
		return nil
	}
	// Only a command that succeeds writes its profiles (cobra skips the
	// post-run hooks after an error).
	root.PersistentPostRunE = func(*cobra.Command, []string) error {
		var errs []error
		if f != nil {
			pprof.StopCPUProfile()
			errs = append(errs, f.Close())
		}
		if memPath != "" {
			errs = append(errs, writeMemProfile(memPath))
			runtime.MemProfileRate = rate
		}
		return errors.Join(errs...)
	}
}

func writeMemProfile(path string) error {
	mf, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	if err := pprof.Lookup("allocs").WriteTo(mf, 0); err != nil {
		mf.Close()
		return fmt.Errorf("--memprofile %s: %w", path, err)
	}
	return mf.Close()
}
