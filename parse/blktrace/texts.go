package blktrace

import "unsafe"

// textArena makes the strings of the message texts a decoder returns,
// back to back in chunks of textChunk bytes: one allocation a chunk
// instead of one a message (a capture with BFQ's full log has about 17 a
// request, and a diff keeps every one). The bytes of a chunk are never
// written again once a string refers to them, which is what makes
// unsafe.String sound; a chunk lives while any of its strings does.
type textArena struct {
	chunk []byte
}

// textChunk is the size of a textArena chunk; a text of more than an
// eighth of it gets a string of its own.
const textChunk = 64 << 10

// string returns b as a string.
func (a *textArena) string(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > textChunk/8 {
		return string(b)
	}
	if cap(a.chunk)-len(a.chunk) < len(b) {
		a.chunk = make([]byte, 0, textChunk)
	}
	off := len(a.chunk)
	a.chunk = append(a.chunk, b...)
	return unsafe.String(&a.chunk[off], len(b))
}
