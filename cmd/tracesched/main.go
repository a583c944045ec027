// Command tracesched analyzes Linux block-layer traces: it reads blktrace
// captures, converts them to Arrow, calibrates a device model, replays the
// requests through I/O scheduler models and diffs the prediction against
// the real trace. The command line is specified in docs/cli.md.
//
// stdout carries data (tables, JSON); stderr carries progress and
// diagnostics. Exit status: 0 success, 1 failure, 2 usage error, 130 and
// 143 after SIGINT and SIGTERM.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	os.Exit(int(runMain()))
}

// runMain is main with signal handling: the first SIGINT or SIGTERM cancels the
// run's context, and the command stops at its next check, removing its
// temporary files; a run that has not stopped within gracePeriod, or a
// second signal, ends the process at once, after the same cleanup. A
// command that takes the signals itself (record) is left to handle them.
func runMain() exitCode {
	ios := System()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ctx, sess := withSession(ctx, ios.In)
	defer sess.cleanup()

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		var sig syscall.Signal
		for sig = (<-sigs).(syscall.Signal); sess.signalsTaken(); sig = (<-sigs).(syscall.Signal) {
			// The command has its own handler (signal.Notify delivers to
			// every channel) and ends as it decides.
		}
		se := &signalError{sig}
		cancel(se)
		select {
		case <-sigs:
		case <-time.After(gracePeriod):
		}
		sess.cleanup()
		fmt.Fprintf(os.Stderr, "tracesched: %v; stopped\n", se)
		os.Exit(int(se.exitStatus()))
	}()
	return mainSession(ctx, os.Args[1:], ios)
}
