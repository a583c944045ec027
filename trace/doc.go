// Package trace is tracesched's model of a block-layer trace. It imports no
// encoding library: the Arrow codec is package trace/arrowfile, the
// btt-style summary package stats.
//
// # Model
//
// An [Event] is one record of a trace: an I/O event (a bio queued, merged,
// split or remapped; a request allocated, inserted, issued, requeued or
// completed; a queue plugged or unplugged) or a notify record (a process
// name, the wall clock at trace start, a scheduler's debug message). Its
// [Action] is the kernel's __BLK_TA_* code (__BLK_TN_* codes follow from
// [ActionProcess] on) and its [Category] the BLK_TC_* bits: the operation
// (read, write, discard, flush), its flags (sync, meta, FUA, readahead) and
// the family of the reporting event. [Time] counts nanoseconds since the
// capture's origin, [NoTime] marking what was not observed; [Dev] is a
// kernel dev_t (major<<20 | minor). Sectors are 512 bytes.
//
// A [Request] is one block-layer request rebuilt from the events: the bios
// that joined it and the times of its life (queue, get, insert, issue,
// complete). A [Bio] is one queued bio and the fate of its request. [Meta]
// describes a capture as a whole: its source format, kernel, devices, time
// origin, wall clock and cgroup names.
package trace
