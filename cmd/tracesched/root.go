package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
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
	return MainContext(context.Background(), args, ios)
}

// MainContext is Main under ctx: when ctx is cancelled (main cancels it on
// SIGINT and SIGTERM, with a signalError as its cause) the command stops
// reading, removes its temporary files and returns 128 plus the signal's
// number.
func MainContext(ctx context.Context, args []string, ios *IOStreams) exitCode {
	ctx, sess := withSession(ctx, ios.In)
	defer sess.cleanup()
	return mainSession(ctx, args, ios)
}

func mainSession(ctx context.Context, args []string, ios *IOStreams) exitCode {
	// Standard output carries the data: a write that fails (a full disk,
	// /dev/full) fails the command, even when the command itself ignored it.
	out := &checkedWriter{w: ios.Out}
	streams := *ios
	streams.Out = out
	root := newRootCmd(&streams)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if se, ok := interrupted(ctx); ok {
		fmt.Fprintf(ios.ErrOut, "tracesched: %v\n", se)
		return se.exitStatus()
	}
	if out.err != nil && (err == nil || errors.Is(err, out.err)) {
		err = fmt.Errorf("writing standard output: %w", out.err)
	}
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(ios.ErrOut, "tracesched: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return exitUsage
	}
	return exitError
}

// isCobraUsage reports errors that cobra makes itself for a bad command
// line (an unknown command), which carry no type of their own.
func isCobraUsage(err error) bool {
	return strings.HasPrefix(err.Error(), "unknown command ")
}

// checkedWriter remembers the first error of the writer it wraps and
// writes nothing more after it.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

// version is the module's version and VCS revision as the build recorded
// them ("(devel)" for a build from a checkout, with its commit).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " " + rev + dirty
	}
	return v + " " + bi.GoVersion
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
		Version:       version(),
	}
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &usageError{fmt.Errorf("%w\nRun '%s --help' for usage", err, c.CommandPath())}
	})
	root.PersistentFlags().BoolVar(&ios.Progress, "progress", false, "print progress lines on stderr every few seconds even off a terminal (also when stderr is a file)")
	addProfileFlag(root)
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
