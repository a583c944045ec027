package diff

// SynthSideForTest exposes synthSide to the external tests.
var SynthSideForTest = synthSide

// SetPackBitsForTest changes packBits and returns a function restoring it.
func SetPackBitsForTest(n int) (restore func()) {
	old := packBits
	packBits = n
	return func() { packBits = old }
}

// DropStreamForTest discards the figures s accumulated as its bios arrived,
// so that Compare reads them from the bio table.
func DropStreamForTest(s *Side) { s.stream = streamFigures{off: true} }

// StreamedForTest reports whether s kept figures accumulated as its bios
// arrived, at the default window.
func StreamedForTest(s *Side) bool { return s.stream.usable(defaultWindow) }
