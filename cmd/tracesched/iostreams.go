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
	// ErrFile reports whether stderr is a regular file (a log): progress is
	// then written as a line every few seconds (see progress).
	ErrFile bool
	// Progress is --progress: progress lines on stderr even when it is a
	// pipe.
	Progress bool
}

// System returns the process's streams.
func System() *IOStreams {
	return &IOStreams{
		In:      os.Stdin,
		Out:     os.Stdout,
		ErrOut:  os.Stderr,
		ErrTTY:  term.IsTerminal(int(os.Stderr.Fd())),
		OutTTY:  term.IsTerminal(int(os.Stdout.Fd())),
		ErrFile: isRegular(os.Stderr),
	}
}

// isRegular reports whether f is a regular file.
func isRegular(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}

// testStreams returns streams backed by buffers, as if piped.
func testStreams() (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut}, &out, &errOut
}
