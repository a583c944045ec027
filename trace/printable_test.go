package trace

import "testing"

// Issue 14 item 10: process names with terminal escapes were printed raw.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"fio":                         "fio",
		"kworker/u8:2":                "kworker/u8:2",
		"évier":                       "évier",
		"evil\x1b]0;pwned\x07\x1b[2J": `evil\x1b]0;pwned\x07\x1b[2J`,
		"a\x00b\x7f":                  `a\x00b\x7f`,
		"c1\u009bm":                   `c1\x9bm`,
		"bad\xffutf8":                 `bad\xffutf8`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}
