package main

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are the command's standard streams and what is known about them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// ErrTTY reports whether stderr is a terminal: progress is drawn only then.
	ErrTTY bool
	// OutTTY reports whether stdout is a terminal.
	OutTTY bool
}

// System returns the process's streams.
func System() *IOStreams {
	return &IOStreams{
		In:     os.Stdin,
		Out:    os.Stdout,
		ErrOut: os.Stderr,
		ErrTTY: term.IsTerminal(int(os.Stderr.Fd())),
		OutTTY: term.IsTerminal(int(os.Stdout.Fd())),
	}
}

// testStreams returns streams backed by buffers, as if piped.
func testStreams() (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}, &out, &errOut
}
