package replay

// engineState is the engine's private bookkeeping in a Request.
type engineState struct{}
