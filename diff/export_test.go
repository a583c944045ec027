package diff

// SynthSideForTest exposes synthSide to the external tests.
var SynthSideForTest = synthSide
