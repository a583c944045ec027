// Package blktrace reads Linux block-layer traces: blktrace's binary
// records (per-CPU relay files, blkparse -d dumps, the ftrace blk tracer's
// bin stream) and text (blkparse's default output, the ftrace blk tracer's
// text), into trace.Event values.
//
// Entry points: Open takes one command-line INPUT (docs/cli.md "Inputs")
// and detects its format from its content; NewReader reads one binary
// stream, NewTextReader one text stream, NewMergeReader merges readers by
// time.
//
// # Binary records
//
// The record is struct blk_io_trace of include/uapi/linux/blktrace_api.h.
// Protocol version 7 (every kernel up to 6.18), 48 bytes then pdu_len
// payload bytes, back to back with no padding:
//
//	off size field    notes
//	0   4    magic    0x65617400 | version (0x07); byte order detected from this field
//	4   4    sequence per-CPU event number, from 1; 0 in ftrace streams; garbage in notify records (<= 6.18)
//	8   8    time     ns, kernel monotonic clock (ftrace: the trace clock)
//	16  8    sector   512-byte units, whole-disk coordinates (also when tracing a partition)
//	24  4    bytes    bytes the event covers
//	28  4    action   category bits << 16 | cgroup flag 0x100 | action code (low byte)
//	32  4    pid      task current at the event
//	36  4    device   dev_t: major = dev >> 20, minor = dev & 0xfffff
//	40  4    cpu      CPU the event was recorded on
//	44  2    error    negative errno truncated to u16 (read as int16)
//	46  2    pdu_len  payload bytes that follow
//	48  ...  payload  cgroup id first (8 bytes) when action & 0x100, then the action's own
//
// Protocol version 8 (struct blk_io_trace2, Linux 6.19, asked for with
// BLKTRACESETUP2), 64 bytes then the payload; pid and action swap places and
// action widens to 64 bits, with extension categories from bit 32:
//
//	off size field    notes
//	0   4    magic    0x65617408
//	4   4    sequence
//	8   8    time
//	16  8    sector
//	24  4    bytes
//	28  4    pid
//	32  8    action   code | 0x100 cgroup | classic categories << 16 | extension categories << 32
//	40  4    device
//	44  4    cpu
//	48  2    error
//	50  2    pdu_len
//	52  12   padding  zero
//	64  ...  payload
//
// Byte order: the first record's magic is read little-endian and then
// big-endian; the one that gives 0x656174vv decides for the whole stream (the
// recording host's order). Versions other than 7 and 8 are refused with
// "unsupported blktrace version 0x%02x". When no magic is at offset 0 but
// one is at offset 16, the stream is an ftrace bin stream: each record
// follows a 16-byte ftrace header (pid i32, cpu i32, ts u64, host order)
// that must repeat the record's pid, cpu and time. A 6.19 kernel
// mis-synthesizes these records (it copies a v8 body behind a v7 header);
// such a record fails that check and is reported, not misread.
//
// Every record's magic is checked. A bad magic, a version change or a
// record cut short ends the stream with a *FormatError naming the file, the
// record's byte offset and the last good sequence number (blkparse stops
// there too).
//
// # Actions and payloads
//
// Event.Action is the action code (trace.ActionQueue ... ActionZoneUnplug).
// Event.Cat holds action >> 16: the classic BLK_TC_* bits in bits 0-15 and,
// for v8, the extension categories (record bits 32 and up) in bits 16 and
// up. Records in the NOTIFY category are notes: code 0 PROCESS
// (trace.ActionProcess, Text = comm, NUL-trimmed), 1 TIMESTAMP
// (ActionTimestamp, WallSec/WallNsec, decoded in the header's byte order),
// 2 MESSAGE (ActionMessage, Text). Their sequence, sector, bytes and error
// fields are uninitialised kernel memory up to 6.18 and are zeroed.
// Records with any other code are skipped and counted
// (Diagnostics.UnknownActions), as blkparse prints "Bad fs action".
//
// Payloads, after the 8-byte cgroup id (header byte order; Event.Cgroup,
// for messages too, 1 = root) when the 0x100 flag is set:
//
//	U, UT, ZU  u64 big-endian: requests released            -> Event.Depth
//	X          u64 big-endian: sector of the second part    -> Event.SplitSector
//	A          be32 device_from, be32 device_to, be64 sector_from
//	           -> FromDev, FromSector; Event.Dev = device_to, as blkparse prints it
//	PROCESS    comm, 16 bytes NUL-padded
//	TIMESTAMP  u32 tv_sec, u32 tv_nsec of the wall clock at the note's time
//	MESSAGE    text without NUL
//
// # Time
//
// Event.Time is ns since the capture's origin, the time of the first I/O
// (non-notify) event across all files, as blkparse's genesis;
// trace.Meta.Origin holds that absolute time and Meta.WallSec/WallNsec the
// wall clock at it (from the TIMESTAMP note). Notes read before the first
// I/O event keep their own time relative to the origin (a relay TIMESTAMP
// note taken at trace start is slightly negative), except that a note
// later than the origin there is clamped to 0: a blkparse -d dump writes
// its PROCESS and TIMESTAMP notes first with their absolute times while
// rebasing everything else to 0, and the dump no longer tells the genesis.
// Meta's wall clock is then the note's, approximately the origin's.
//
// # Comm
//
// PROCESS notes build a pid -> comm map (latest note wins; pids are
// reused), and every later event of the pid gets Event.Comm from it; text
// input does the same with the [comm] column (blkparse) or the context
// prefix (ftrace). The strings are shared, not copied per event.
//
// # Per-CPU sets and what differs from blkparse 1.2.0
//
//   - Every file of NAME.blktrace.N that exists is read (0-byte files too);
//     a missing index does not stop the scan (blkparse stops at the first),
//     it is reported in Diagnostics.MissingCPUFiles.
//   - Records whose cpu field differs from the file's index are read and
//     counted (Diagnostics.CPUMismatch); blkparse drops them.
//   - Cgroup-flagged I/O events and messages are read; blkparse 1.2.0
//     reports "Bad fs action" for the former and drops the latter.
//   - Sequence gaps per (device, CPU) on I/O records are counted as dropped
//     events in file mode too (blkparse counts "skips" only reading a pipe);
//     sequence 0 means no information.
//   - Files are merged by time with ties broken by CPU index, then order
//     within a file.
//
// Files are read incrementally through 256 KiB buffers (zstd and gzip
// decompressed on the fly), so memory does not grow with the capture; I/O
// events are decoded without allocation.
//
// BUG: only the notes before a dump's first I/O event are clamped. A dump
// that blkparse 1.2.0 wrote from cgroup-tagged traces keeps the tagged
// messages it mistook for unknown notes at absolute times further in; they
// come out at their absolute time minus the origin, out of order.
//
// BUG: a live `blktrace -o -` stream interleaves relay chunks of several
// CPUs out of time order; it is read in stream order, not re-sorted as
// blkparse's pipe mode does.
package blktrace
