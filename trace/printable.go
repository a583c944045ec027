package trace

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable returns s safe to print on a terminal: control characters
// (C0, DEL, C1, so every terminal escape sequence's introducer) and
// invalid UTF-8 bytes are shown as Go escapes (\x1b, \x07, ...). A process
// name is whatever the task set with prctl(PR_SET_NAME), and a capture
// records it as is: printed raw in a table, "\x1b]0;...\a" would retitle
// the terminal and "\x1b[2J" clear it. Printable strings are returned
// unchanged without allocating.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
