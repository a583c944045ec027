package device

import "github.com/tracesched/tracesched/trace"

// isFlush reports whether a request is a flush the block layer's flush
// machinery made (REQ_OP_FLUSH: zero bytes, F; "FN" in blkparse). Its
// service time is the device's cache write-back (for a loop device, an
// fsync of the backing file in the loop worker), drawn from the "other"
// class fitted on the capture's own flushes. It neither opens nor joins a
// completion bunch: a bunch is the loop worker delivering the completions
// of the data commands it had in hand, and a flush, served synchronously,
// is not one of them; letting reads join a 15 ms flush's bunch would hold
// them for the whole flush. A device with a write-through cache never sees
// one (the flush machinery drops flushes, replay.WriteThrough).
func isFlush(cat trace.Category, bytes uint32) bool {
	return bytes == 0 && cat&trace.CatFlush != 0
}

// flushLatency returns the latency of a flush request for the draw u in
// [0, 1), ns: the "other" class's base (its zero-byte latency) times a
// draw from its residual distribution, without the saturation factor of
// the requests in flight: the loop device's flush is an fsync of the
// backing file, whose cost is the dirty data behind it, not the queue
// depth, and 50 writes in flight would otherwise stretch a 4 ms flush
// tenfold. The dirty data shows instead in the bytes on the device ahead
// of the flush (ahead, with the class's OpTiming.Ahead). Without an
// "other" class (a capture with no flushes) it is the write class's base.
func (n *NonRotational) flushLatency(ahead, u float64) float64 {
	ot := n.Other
	if ot == nil {
		ot = n.op(OpWrite)
	}
	l := ot.mean(0)
	if r := ot.Residual; r.Len() > 0 {
		l *= r.At(u)
	}
	return l + ot.wait(ahead)
}
