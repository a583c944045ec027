package diff

// SynthSideForTest exposes synthSide to the external tests.
var SynthSideForTest = synthSide

// SetPackBitsForTest changes packBits and returns a function restoring it.
func SetPackBitsForTest(n int) (restore func()) {
	old := packBits
	packBits = n
	return func() { packBits = old }
}
