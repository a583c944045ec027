// Command tracesched analyzes Linux block-layer traces: it reads blktrace
// captures, converts them to Arrow, calibrates a device model, replays the
// requests through I/O scheduler models and diffs the prediction against
// the real trace. The command line is specified in docs/cli.md.
//
// stdout carries data (tables, JSON); stderr carries progress and
// diagnostics. Exit status: 0 success, 1 failure, 2 usage error.
package main

import (
	"os"
)

func main() {
	os.Exit(int(Main(os.Args[1:], System())))
}
