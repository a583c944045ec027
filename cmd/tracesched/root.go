package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// exitCode is the process exit status, decided in one place (Main).
type exitCode int

const (
	exitOK    exitCode = 0
	exitError exitCode = 1
	exitUsage exitCode = 2
)

// usageError marks an error in how the command was called (bad flag,
// wrong number of arguments, invalid flag value): exit status 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// Main runs the command line args with the given streams and returns the
// exit status. It never calls os.Exit, so tests can run it.
func Main(args []string, ios *IOStreams) exitCode {
	root := newRootCmd(ios)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(ios.ErrOut, "tracesched: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command ") {
		// cobra reports an unknown command as a plain error: usage too.
		return exitUsage
	}
	return exitError
}

func newRootCmd(ios *IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   "tracesched",
		Short: "Analyze block-layer traces and replay them through I/O scheduler models",
		Long: `tracesched reads Linux block-layer traces (blktrace per-CPU files, blkparse -d dumps,
the ftrace blk tracer's binary and text output, blkparse text; plain, gzip or zstd),
converts them to Arrow, calibrates a device model from them, replays their requests
through models of BFQ, CFQ, mq-deadline and none, and diffs the prediction against
what the real scheduler did.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{fmt.Errorf("%w\nRun '%s --help' for usage", err, c.CommandPath())}
	})
	root.PersistentFlags().BoolVar(&ios.Progress, "progress", false, "print progress lines on stderr every few seconds even off a terminal (also when stderr is a file)")
	for _, c := range subcommands(ios) {
		root.AddCommand(c)
	}
	return root
}

// exactArgs is cobra.ExactArgs with a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return &usageError{err}
		}
		return nil
	}
}

// rangeArgs is cobra.RangeArgs with a usage error.
func rangeArgs(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.RangeArgs(min, max)(cmd, args); err != nil {
			return &usageError{err}
		}
		return nil
	}
}

// minArgs is cobra.MinimumNArgs with a usage error.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.MinimumNArgs(n)(cmd, args); err != nil {
			return &usageError{err}
		}
		return nil
	}
}
