package blktrace

import (
	"errors"
	"fmt"
)

// FormatError reports malformed binary input: the file, the byte offset of
// the record that could not be read, and the sequence number of the last
// record read before it (0 when none had one).
//
// It prints as
//
//	sda.blktrace.3: offset 0x1a2b0 (seq 4812): bad magic 0x00000000
type FormatError struct {
	File   string // file name as given to the reader
	Offset int64  // byte offset of the bad record in the (decompressed) stream
	Seq    uint32 // sequence number of the last good record, 0 if none
	Err    error  // what is wrong
}

func (e *FormatError) Error() string {
	if e.Seq != 0 {
		return fmt.Sprintf("%s: offset %#x (seq %d): %v", e.File, e.Offset, e.Seq, e.Err)
	}
	return fmt.Sprintf("%s: offset %#x: %v", e.File, e.Offset, e.Err)
}

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }

// SyntaxError reports a text line that could not be parsed: the file, the
// 1-based line and the 1-based byte column of the offending token.
//
// It prints as
//
//	run1.txt:118:27: unknown action "Z"
type SyntaxError struct {
	File   string
	Line   int
	Column int
	Err    error
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %v", e.File, e.Line, e.Column, e.Err)
}

// Unwrap returns the underlying error.
func (e *SyntaxError) Unwrap() error { return e.Err }

// ErrTruncated is wrapped by a FormatError when the stream ends inside a
// record (a capture cut short, or a partial download).
var ErrTruncated = errors.New("truncated record")
