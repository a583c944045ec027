// Package record records block-layer traces through tracefs: the ftrace
// blk tracer's binary stream (trace_options bin + context-info) read from
// trace_pipe and split into the per-CPU blktrace files (NAME.blktrace.N)
// that blkparse, btt and parse/blktrace read, with manifest.json beside
// them (package manifest).
//
// A recording mounts tracefs if needed, refuses to start when another
// tracer, enabled trace events or an enabled device trace show that
// someone else uses ftrace, takes the lock of the team's capture scripts
// (/tmp/rig/.trace.lock), saves every tracefs setting it changes and
// restores them on every way out (error, signal, full disk). Per device it
// sets act_mask, start_lba=0, end_lba=device size and pid=0 explicitly
// and reads them back: a blk_trace keeps its filters, and a stale end_lba
// once dropped every request above it.
//
// Ring-buffer losses are counted from per_cpu/cpuN/stats (overrun,
// dropped events) and from the in-band "CPU:n [LOST m EVENTS]" lines of
// the stream; any loss marks the trace incomplete.
package record
