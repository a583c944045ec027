package replay

import (
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/tracesched/tracesched/trace"
)

// Record is one bio of a workload as the capture recorded it, with what
// the workload inferred about what released it. The engine replays records;
// a Device may read a request's records (Request.Records) to reuse the
// capture's own timing.
//
// The fields narrower than 8 bytes sit side by side (216 bytes a record,
// not 256 with each bool padded to 8): the engine can hold most of a
// capture's records at once, read ahead for its processes.
type Record struct {
	PID   uint32 // process that queued it
	CPU   uint32 // CPU its Q was recorded on (the submitting CPU; Config.Submit)
	Index uint32 // position in its process's stream of bios, from 0
	Bytes uint32
	// DoneCPU: the CPU its C was recorded on (the completing CPU, often
	// not the submitting one: the loop device completes on its worker's;
	// Config.Submit); a capture's workload gives CPU when it shows no C.
	DoneCPU uint32
	Cgroup  uint64         // cgroup id, 0 when unknown
	Comm    string         // process name, "" when unknown
	Sector  uint64         // start sector, 512-byte units
	Cat     trace.Category // operation and flags (OpFlags only)
	// Segments is the bio's physical segments (bio_phys_segments), which
	// count toward its request's Queue.MaxSegments; 0: the fewest a bio
	// of Bytes can have (one per 64 KiB). A trace does not record them:
	// a capture's workload infers them where its requests show them (see
	// the segment rule on Workload).
	Segments uint16
	// Plugged: the process held a plug (P) when it queued the bio, so the
	// bio's request goes to the process's plug list. PlugEnd: the process
	// unplugged (U) after this bio and before its next one; the plug list is
	// flushed once this bio has its request.
	Plugged, PlugEnd bool

	Queue trace.Time // captured Q
	Issue trace.Time // captured D of the request that served it, NoTime if unseen
	Done  trace.Time // captured C of the request that served it, NoTime if unseen

	// lockOpen, lockClose: the bio opens, or ends, an exclusive flush
	// section (step 7 of the rule, lock.go); recordExt.lockWake: for
	// lockOpen, the process's hand-off delay.
	lockOpen, lockClose bool
	// lockWaited, recordExt.lockGap: lockMark.waited and gap.
	lockWaited bool
	// flushBefore: the process's plug was flushed after the bio's Q and
	// before its request (a UT between them: it slept for a tag after
	// its merge attempt failed), and the bio's request started the plug
	// again. The engine flushes the plug before the bio's new request.
	flushBefore bool
	// Open: the bio arrives at its captured Queue time whatever the mode
	// (the closed-loop rule on Workload; Dep, DepCount and Think below
	// say what released a bio that is not Open).
	Open bool
	// noMerge: REQ_NOMERGE, the split's first parts (see parent).
	noMerge bool
	// wbtTracked: the bio (a part of one) got the writeback throttle's
	// token (wbt.go); its request carries it.
	wbtTracked bool

	// What released the bio (see the closed-loop rule on Workload; Open
	// above). DepCount: completions of the process's own bios (counted
	// from 1, in completion order, whichever bios) it needs before it may
	// arrive, so the process keeps no more in flight than it did in the
	// capture.
	// Dep >= 0: the bio is dependent: the completion of the process's bio
	// Dep released it in the capture, and it arrives Think after its
	// DepCount-th completion. Dep < 0 and not Open: it followed its
	// process's previous bio by Think (a back-to-back submission).
	Dep      int64
	DepCount int64
	Think    trace.Time
	// wake: the process's wake-up delay in the capture at its latest
	// dependent bio up to this one: the time from the latest completion
	// it had seen to its submission (Q_k - C_j), how long it took to
	// submit again once a completion woke it (step 4).
	wake trace.Time
	// Predicted times, set by the engine during a run.
	predQueue trace.Time
	predDone  trace.Time
	proc      *proc
	// ext: the fields few records set (recordExt), nil while none is:
	// kept apart, the records a run holds at once (up to most of a
	// workload, see recQueue) are 48 bytes smaller each.
	ext *recordExt
}

// recordExt holds the fields of a Record that few records set: cross-
// process edges, exclusive flush sections and split bios. Record's
// accessors read a nil ext as all zero; extOf allocates it.
type recordExt struct {
	// lockWake, lockGap: see Record.lockOpen and lockWaited.
	lockWake trace.Time
	lockGap  trace.Time
	// partsSeen: a bio split at max_sectors that never completed in the
	// capture: the parts that got a request before the capture ended (0:
	// every part, or unknown). A process that does not cycle (WorkFixed)
	// sends those parts only, as the capture did; the bio never completes.
	partsSeen int
	// A part of a bio split at max_sectors (parent set): the bio completes
	// for its process when its last part does (bio_chain); partsLeft
	// counts the parent's parts not yet completed.
	parent    *Record
	partsLeft int
	// after: the earlier bio of another process whose completion released
	// this one in the capture (a cross-process edge, step 6 of the rule on
	// Workload), afterDelay the time from that completion to this Q.
	after      *Record
	afterDelay trace.Time
}

// extOf returns r's recordExt, allocating it on first use.
func (r *Record) extOf() *recordExt {
	if r.ext == nil {
		r.ext = &recordExt{}
	}
	return r.ext
}

// releaser returns recordExt.after (nil: none).
func (r *Record) releaser() *Record {
	if r.ext == nil {
		return nil
	}
	return r.ext.after
}

// releaseDelay returns recordExt.afterDelay.
func (r *Record) releaseDelay() trace.Time {
	if r.ext == nil {
		return 0
	}
	return r.ext.afterDelay
}

// setAfter sets recordExt.after and afterDelay; a nil a with a zero d
// allocates nothing.
func (r *Record) setAfter(a *Record, d trace.Time) {
	if a == nil && d == 0 && r.ext == nil {
		return
	}
	x := r.extOf()
	x.after, x.afterDelay = a, d
}

// parentBio returns recordExt.parent (nil: r is not a part of a split bio).
func (r *Record) parentBio() *Record {
	if r.ext == nil {
		return nil
	}
	return r.ext.parent
}

// lockWakeOf returns recordExt.lockWake.
func (r *Record) lockWakeOf() trace.Time {
	if r.ext == nil {
		return 0
	}
	return r.ext.lockWake
}

// lockGapOf returns recordExt.lockGap.
func (r *Record) lockGapOf() trace.Time {
	if r.ext == nil {
		return 0
	}
	return r.ext.lockGap
}

// partsSeenOf returns recordExt.partsSeen.
func (r *Record) partsSeenOf() int {
	if r.ext == nil {
		return 0
	}
	return r.ext.partsSeen
}

// End returns the first sector after the bio.
func (r *Record) End() uint64 { return r.Sector + uint64(r.Bytes>>9) }

// recordSource yields records in nondecreasing captured Queue time, each
// process's records in Index order, and io.EOF at the end. close releases
// it (the engine calls it once, at the end of a run).
type recordSource interface {
	next() (*Record, error)
	close()
}

// ProcessStats summarises one process of a workload or a replay.
type ProcessStats struct {
	PID    uint32
	Comm   string
	Cgroup uint64 // cgroup of its first bio
	Bios   int
	Bytes  uint64     // bytes of its completed bios
	First  trace.Time // first Q
	Last   trace.Time // last C
}

// MiBps returns the process's bandwidth: Bytes over First..Last, in MiB/s
// (0 when the span is empty).
func (p ProcessStats) MiBps() float64 { return mibps(p.Bytes, p.First, p.Last) }

// CgroupStats summarises one cgroup of a workload or a replay.
type CgroupStats struct {
	ID    uint64
	Bios  int
	Bytes uint64
	First trace.Time
	Last  trace.Time
}

// MiBps returns the cgroup's bandwidth: Bytes over First..Last, in MiB/s.
func (c CgroupStats) MiBps() float64 { return mibps(c.Bytes, c.First, c.Last) }

func mibps(bytes uint64, first, last trace.Time) float64 {
	if !first.Valid() || !last.Valid() || last <= first {
		return 0
	}
	return float64(bytes) / (1 << 20) / (last - first).Seconds()
}

// Workload is a capture prepared for replay: the device replayed, the queue
// it implies, and a way to stream its bios again.
//
// The closed-loop rule. For bio k of process p (k counted from 0), queued
// at Q_k in the capture (Q_{k-1} its previous bio's Q), the workload
// decides what released it:
//
//  1. The first bio of a process, and every asynchronous write (a write
//     without REQ_SYNC, FUA or flush: page-cache writeback, which no process
//     waits for), is Open: it arrives at its captured time.
//  2. The process's depth D_k is the most bios it had in flight in the
//     capture at any of its submissions up to bio k (bio k included). In
//     the replay bio k needs DepCount = k+1-D_k completions of p's own
//     bios (whichever complete: a process reaps what completes, as
//     io_getevents does), so p never has more than D_k in flight. A psync
//     process has depth 1 and waits for each completion; an fio job of
//     iodepth 16 keeps up to 16 in flight.
//  3. Let C_j be the latest completion, at or before Q_k, of p's own
//     earlier bios. If C_j exists and C_j >= Q_{k-1}, p was waiting for it:
//     the bio is dependent (Dep = j). Its think time is measured from the
//     moment the depth it needed became available in the capture, the
//     DepCount-th completion C_(DepCount): Think = Q_k - C_(DepCount)
//     (Q_k - C_j when DepCount is 0). In the replay it arrives Think after
//     its DepCount-th predicted completion (after the latest one, when
//     DepCount is 0). For a process of depth 1 both are its previous
//     bio's completion; for a batching submitter (fio reaping several
//     completions before submitting again) the delay it showed after the
//     depth freed up is kept. A FUA or PREFLUSH write queued with nothing
//     of p's in flight waited for all of p's I/O, not for depth (jbd2's
//     commit block after its five journal blocks, which make its depth
//     five): DepCount is every completion p had seen (k) and Think is
//     Q_k - C_j. So does any bio queued with nothing of p's in flight
//     when the depth it needed was free before Q_{k-1} (p was not at its
//     depth) and p's bio j had waited 1 ms or more from Q to D (held by
//     the scheduler): p waited for that held I/O (fio's rate limiter
//     drains its I/O before it sleeps; g-bfq-large-nomsg, where BFQ holds
//     the rate-limited job's reads 8 ms at each budget timeout), and the
//     hold, the source scheduler's, is not replayed as p's think time.
//     Step 3e: so does any bio queued with nothing of p's in flight whose
//     latest completion C_j was p's own empty PREFLUSH (an fsync's or
//     fdatasync's blkdev_issue_flush, which sleeps in submit_bio_wait
//     until the flush completes): p waited for the flush, not for depth.
//     A PostgreSQL backend of depth 2 (two bios in flight at some
//     submission) otherwise took its next WAL write as released by the
//     write before the fdatasync, and replayed it while its own flush
//     was still in flight (fs-mqdl-pgbench, backend 4032, bios
//     1380-1381: the write came 3.9 ms after the flush completed in the
//     capture, 330 us before it in the replay), where another backend's
//     flush could share it.
//     Step 3d: a process that kept a request on its plug from bio k-1
//     to bio k (k-1 Plugged and not PlugEnd, k Plugged) did not sleep in
//     between: a task that sleeps flushes its plug (sched_submit_work ->
//     blk_flush_plug, the trace's UT). No completion released bio k
//     then: it takes step 4, and needs no more completions than bio k-1
//     (jbd2 in fs-mqdl-untar keeps its newest journal request on its
//     plug through gaps of 7 ms while earlier ones complete).
//  4. Otherwise p submitted bio k right after bio k-1 (within a batch, or
//     before anything completed): Dep = -1, Think = Q_k - Q_{k-1}; in the
//     replay it arrives Think after bio k-1's replayed arrival, and not
//     before its DepCount-th predicted completion plus p's wake-up delay:
//     Q - C_j of p's latest dependent bio in the capture (up to bio k).
//     In the capture the depth bio k needed was free when p submitted it;
//     when the replay's completions come later than that (a device that
//     completes in other bunches shifts which completion frees which bio),
//     p sleeps at its full depth and is woken by the completion, which
//     takes it as long as it did in the capture, not no time at all.
//  5. Bios arrive in their process's order: never before the previous one
//     has been submitted (and got a request). The gap of step 4 is
//     measured from the end of the previous bio's submission when it slept
//     for a request or a tag (its G or merge came minTagSleep, 50 us, or
//     more after its Q): that sleep was the source queue's (nr_requests,
//     bfq_limit_depth, mq-deadline's async_depth), not the process's, and
//     the replay's queue makes it sleep, or not, itself.
//  6. Cross-process edges. A synchronous write (REQ_SYNC, FUA or flush)
//     whose process had nothing in flight was released by another
//     process's completion when, since the process's own latest completion
//     and its previous bio's Q (whichever came later), another process's
//     synchronous write (an fsync's data, a journal commit, a WAL flush)
//     was queued and completed, and the bio came within half the time
//     since then after that completion: fio's fsync write completes,
//     jbd2 commits; jbd2's commit completes, the fsync returns and fio
//     writes again. Once a pair (releaser, released) has been seen
//     crossRepeat (2) times, and while it accounts for at least
//     1/crossShare (1/4) of the released process's synchronous writes
//     queued with nothing in flight, each later such bio whose
//     releaser's bio was queued and completed in that idle span (the
//     half-time test counts the pair's releases, but a known pair does
//     not need it: on a loaded host jbd2 took longer to wake after fio's
//     write than the write took, fs-mqdl-fsync-vs-seqread) waits, in the
//     replay, for the predicted completion of that very bio of the other
//     process plus the captured delay, instead of its own think time
//     (still needing its DepCount own completions); that delay is also
//     the wake-up delay its back-to-back bios keep (step 4): the other
//     process woke it, not its own latest completion (jbd2's journal
//     blocks after the first of a commit). Independent writers
//     release each other by coincidence for under 1 % of their writes
//     (c-bfq-8randwrite-root) and get no edge. Async writes stay Open:
//     writeback driven by the flusher's timer or dirty thresholds arrives
//     at its captured time.
//  7. Exclusive flush sections (lock.go). Processes whose sections (a
//     synchronous write, then the completion of their next empty
//     PREFLUSH: a WAL write and its fdatasync) never overlap each other's
//     in the capture, 1 % aside, share a lock (PostgreSQL's WALWriteLock):
//     in the replay a section's first bio waits while another member's
//     section is open. One that waited for the lock in the capture (a
//     member released it after the bio's own latest completion) arrives
//     its captured delay after the replay's release instead of its think
//     time, which was that wait.
//
// The plug and the segment rule. Record.Plugged and PlugEnd follow the
// capture's P, U and UT events, but a U right after a bio's G and before
// a P with no Q between is blk_add_rq_to_plug flushing a full plug
// (BLK_MAX_REQUEST_COUNT requests, or a last one of BLK_PLUG_FLUSH_SIZE
// bytes or more) before the bio's new request starts the next one; the
// engine applies that rule itself, so it does not end the bio's plug.
// Nor does a UT between a bio's Q and its G: the bio slept for a request
// or a tag after its merge attempt failed (blk_mq_submit_bio:
// blk_mq_attempt_bio_merge, then blk_mq_get_new_requests), the sleep
// flushed the plug, which stays installed, and the bio's request starts it
// again (the P after its G); the engine flushes the plug before that
// request (Record.flushBefore), and the segment rule below judges the bio
// against the request it tried before the flush. A bio split at
// max_sectors whose later parts had not got requests when the capture
// ended is replayed, under fixed work, as far as the capture shows it. A
// request holds at most Queue.MaxSegments physical segments, and a trace
// does not record a bio's. Each bio counts the fewest it can have (one
// per 64 KiB, BLK_MAX_SEGMENT_SIZE) unless the capture shows more: a bio
// that got a request of its own (G) though it starts where its process's
// newest plugged request ends, may merge with it and would keep it within
// max_sectors was refused for segments (ll_new_hw_segment), so that
// request's bios get at least 129 segments with it (BLK_MAX_SEGMENTS is
// taken as the capture's max_segments), shared out in proportion to the
// pages each could add (at most one segment a page). Writeback of large
// folios in fs-mqdl-untar: 147 of its 1746 writeback requests end so,
// with 31-90 bios of up to 235 pages.
//
// What transfers across schedulers (issue 10, item 4): a wait for a
// completion, its own or another process's, is replayed as a wait for the
// predicted completion, so a process that the source scheduler starved
// (its completions late) does not keep that wait; only the delay after
// the completion (the application's think time) and the sleep-free gaps
// are carried over, and the depth is the most the process kept in flight.
// A gap between two submissions also holds the submission's own CPU cost,
// which is the source scheduler's (18.5 us a 4 KiB read under BFQ against
// 5.8 under mq-deadline in recorded/a-bfq-w100-900 and b-mqdl-w100-900):
// under Config.Submit (the host model, host.go) the replay keeps only the
// application's part of each gap (less the source's cost, Workload.SubmitGap)
// and holds the submitting CPU for the replayed scheduler's cost instead.
// The amount of work is the capture's by default (WorkFixed); under
// WorkTimed (Config.Work, what a what-if replays) a process that ran from
// the capture's start to its end sends its bios again, cycle after cycle,
// for as long as the capture lasted: the capture ended the run, not the
// process's work, so a process the source scheduler starved does as much
// as the replayed scheduler lets it, and one it favoured does not run out
// early and leave the device to the others.
//
// The stall rule (stall.go): a host stall is a gap the recording host made,
// not the application nor the scheduler: the process was descheduled (a
// loaded machine: wi-seed000-mqdl at a load average of 23.5 has fio's
// iodepth-64 readers stall up to 13.8 ms with all 64 reads completed and
// none reaped). For each process of depth 2 or more the workload takes its
// reaping delays: at each bio k queued after some of the process's own
// completions arrived since Q_{k-1}, with bios in flight at Q_{k-1}, the
// time from the first of those completions to Q_k. A process whose median
// delay (its typical one) is at most stallTypMax (200 us: a CPU-bound
// submitter, fio at its depth) and that has at least stallSamples (100)
// of them has candidates: delays of at least stallMin (1 ms) and
// stallRatio (20) times the typical one. When they are at most 1 in
// stallShare (10) of its delays (more: the process's regime, kept), those
// that recur at a fixed number of bios are the application's (fio's
// thinktime with thinktime_blocks: a drain, then a sleep of a fixed
// length, every N bios; the period at least the depth, within 2 bios, on
// one phase, seen at least 3 times and at half the bios/N places at
// least, and half of those, 3 at least, idle alike, within a tenth of
// their median, from the drain's last completion: seed000-stall.fio, 12
// ms every 1500 reads, 19 sleeps kept under BFQ, 22 under mq-deadline;
// host stalls recur at multiples of the depth, after a full drain, but do
// not last alike), and each other one with
// the process's whole depth in flight at Q_{k-1} (it waited for a
// completion, which came, and it did not take it) is a host stall. Under
// StallsDrop (Config.Stalls) a host stall's bio gets its process's typical
// delay as Think, and so does the wake-up delay of step 4 that its later
// bios take from it; StallsKeep, the default (a validation: the stalls did
// happen), replays it as recorded. wi-seed000-mqdl -> BFQ 100:900
// low_latency=0 on the loop device's probe model: the weight-100 share
// 0.511 with the stalls (a stall expires cg2's queue as idle, BFQ's
// think-time sampling then marks it not short and bfq_check_waker makes
// cg1 its waker), 0.119 without, against 0.133 in the real run. Dropping
// is not the default of a what-if: it predicts a host without stalls,
// and the real runs had their own (seed 000 -> BFQ at each weight pair,
// total bandwidth errors 10/4/33/25/96 % with the stalls, 24/34/13/60/159
// % without). Limits: a stall that falls when the process was below its
// depth (draining, or at the depth the scheduler let it keep) is kept; a
// deliberate sleep that does not recur at a fixed count of bios (a timer,
// a rate paced by time) is dropped when the process is at its depth; a
// psync process's gaps (depth 1) are kept: its think time cannot be told
// from a stall; the host's load, which the manifest records, is not read.
//
// Limits: the edges are inferred from timing, so a process released by a
// completion it did not wait for (a coincidence that repeats, as two
// busy processes sharing a device show) gets a false edge, and one woken by
// a read's completion or by something outside the trace (a timer, a
// network request, a lock) keeps its captured gap. A chain through a
// process that issues no I/O (a waiter woken by a thread that itself
// waited) is seen as one edge from the last completion. The first
// crossRepeat releases of a pair keep their captured gaps. A wait that is
// the source scheduler's without being a wait for a completion, such as
// throttling by writeback (balance_dirty_pages) paced by the device, is
// carried over. The depth is the application's (fio's iodepth), but the
// requests it keeps in flight on the device also depend on how the device
// completes them: a device that completes in bunches leaves slots empty
// while the process resubmits one bio at a time, and the replay's device,
// completing one by one, does not. recorded-fs/raw-sweep-none, 4 KiB
// random writes at iodepth 64: fio was at 64 in its own view 99.8 % of
// the time (its JSON), the block layer saw 52.75 in flight on average
// (time-weighted), 85 % of the completions came within 1.5 us of the
// previous one and 213 ms of the 400 ms step in completion gaps over
// 500 us; a slot waited a median 102 us for its next bio, 2.2 us apart
// within a batch. Replayed through none on its own device model the step
// keeps 58.9 in flight (14 % of completions within 1.5 us) at a mean Q2C
// of 604 us against 598: +10.5 % bandwidth, the in-flight ratio (qd16:
// 13.4 against 12.1, +8.4 %). Carrying each back-to-back bio's wait for
// its slot over as its wake-up delay fixes the sweep and takes the
// capture's device's bunching into other processes' timing (f-none-mixed,
// b-mqdl-w500-500: -8 to -9 %): it is the device model's to reproduce.
//
// Counting completions rather than waiting for the very bio whose
// completion released a submission in the capture keeps the replay faithful
// when the model completes requests in another order or spreads out what
// the real device completed in bunches: a bio waits for the depth it needs,
// not for the slowest of a batch.
//
// A process of queue depth N thus keeps N in flight (each completion
// releases one submission), a psync process submits its next bio a think
// time after its previous completion, and a process that never waited is
// paced by its own captured gaps. Mode Open ignores Dep and Think: every bio
// arrives at its captured time.
type Workload struct {
	Dev   trace.Dev // device replayed (its Q events are the bios)
	Depth int       // most requests in flight at once in the capture (D not yet C)
	// MaxSectors is the largest request the queue allows, in sectors: the
	// largest request issued in the capture, but at least 2560 (the
	// kernel's default max_sectors_kb, 1280, which the captures' devices
	// report): a capture of small random I/O shows small requests only
	// because nothing merged, not because larger ones were refused.
	MaxSectors uint32
	Bios       int // bios (Q events) on Dev
	// WriteCache and FUA are what the capture shows of the device's cache
	// (the flush machinery's behaviour, flush.go): WriteBack when the flush
	// machinery issued flush requests (D of zero bytes with F: "FN"),
	// WriteThrough when bios asked for PREFLUSH or FUA and none was issued,
	// WriteCacheAuto when no bio asked; FUA when a request was issued
	// with FUA (the device honours it, no post-flush needed).
	WriteCache WriteCache
	FUA        bool
	Start, End trace.Time
	// SubmitGap is the median of the capture's back-to-back Q-to-Q gaps:
	// for each bio other than an asynchronous write, the time from its
	// process's previous Q on the device when none of that process's bios
	// completed in between and the previous bio did not sleep for a
	// request (its G or merge within minTagSleep of its Q), ns at 100 ns
	// resolution (gaps of 1 ms or more count as 1 ms); 0 when the capture
	// has fewer than minSubmitGaps of them. For a CPU-bound submitter
	// (fio at its depth) it is what one bio's submission costs the
	// submitting CPU under the recording scheduler, its own think time
	// near zero: the source cost of Config.Submit (SubmitCostFor).
	// SubmitGaps counts the gaps measured.
	SubmitGap  trace.Time
	SubmitGaps int
	// CompleteGap is the mean of the capture's back-to-back C-to-C gaps:
	// for each C on the device whose CPU's previous Q or C on the device
	// was a C within completeBackToBack (the next completion of a bunch
	// the CPU handled in one go), the time from that one, ns; 0 when the
	// capture has fewer than minSubmitGaps of them. The mean, not the
	// median: the gaps fall in two modes (on the rig's loop device near
	// 1 us and near 4 us, a completion that wakes its process and one
	// that does not), in proportions that vary from run to run, and the
	// median jumps between them (two runs of one job under none: 0.7
	// and 3.2 us; their means 1.9 and 2.9). It is what one request's completion costs the completing
	// CPU under the recording scheduler (the scheduler's finish_request
	// and its completed_request, bfq_completed_request with its
	// messages): the completion's source cost of Config.Submit.
	// CompleteGaps counts the gaps measured.
	CompleteGap  trace.Time
	CompleteGaps int
	// WBTWarm is the most asynchronous writes (the writes the writeback
	// throttle tracks, wbt.go) on the device at once within 100 ms of the
	// capture's first: the throttle's state when tracing began, which the
	// replay's starts from (0: none).
	WBTWarm int
	// WBTPeak is the most asynchronous writes on the device at once over
	// the whole capture: more than the throttle's wb_normal at its highest
	// step lets in says a writer had slept in balance_dirty_pages (wbt.go).
	WBTPeak int

	Processes []ProcessStats // as captured, by PID
	Cgroups   []CgroupStats  // as captured, by id

	perPID map[uint32]int // bios per process
	// stalls: the stall rule's findings (stall.go), found by stallsFn on
	// first use (a replay under StallsDrop, Workload.Stalls).
	stalls     stallSet
	stallsFn   func() stallSet
	stallsOnce sync.Once
	open       func() (recordSource, error)
	mu         sync.Mutex // serializes runs of a workload built from records
}

// NewWorkloadFromRecords builds a workload from records given in any order;
// only PID, Index (or the order of Queue times when all Index are 0),
// Cgroup, Comm, Sector, Bytes, Cat, Queue, Issue, Done and the plug flags
// are read. Dependencies are inferred as for a capture. Depth is derived
// from the records' captured Issue and Done times; MaxSectors is left 0
// (the engine's default applies: the records do not show request sizes).
func NewWorkloadFromRecords(recs []Record) (*Workload, error) {
	rs := make([]Record, len(recs))
	copy(rs, recs)
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := &rs[i], &rs[j]
		if a.Queue != b.Queue {
			return a.Queue < b.Queue
		}
		if a.PID != b.PID {
			return a.PID < b.PID
		}
		return a.Index < b.Index
	})
	next := map[uint32]uint32{}
	for i := range rs {
		r := &rs[i]
		if !r.Queue.Valid() {
			return nil, fmt.Errorf("record %d of pid %d has no queue time", r.Index, r.PID)
		}
		r.Index = next[r.PID]
		next[r.PID]++
		r.Cat = r.Cat.OpFlags()
	}
	w := &Workload{perPID: map[uint32]int{}}
	st := newStatsBuilder()

	var spans []ioSpan
	for i := range rs {
		r := &rs[i]
		w.perPID[r.PID]++
		st.add(r)
		if r.Issue.Valid() && r.Done.Valid() {
			spans = append(spans, ioSpan{r.Issue, r.Done})
		}
	}
	w.Depth = maxInFlight(spans)
	w.Bios = len(rs)
	st.finish(w)
	w.stallsFn = func() stallSet {
		return inferStalls(len(rs), func(i int) stallInput {
			r := &rs[i]
			return stallInput{pid: r.PID, index: r.Index, queue: r.Queue, done: r.Done, async: asyncWrite(r.Cat)}
		})
	}
	// The records' replay state lives in the records themselves and is reset
	// as each is read, so a run does not copy them; runs of this workload
	// take turns (done releases the lock at the end of a run).
	w.open = func() (recordSource, error) {
		w.mu.Lock()
		return &sliceSource{recs: rs, inf: newInferrer(), done: w.mu.Unlock}, nil
	}
	return w, nil
}

// sliceSource streams records held in memory.
type sliceSource struct {
	recs []Record
	i    int
	inf  *inferrer
	done func()
}

func (s *sliceSource) next() (*Record, error) {
	if s.i >= len(s.recs) {
		return nil, io.EOF
	}
	r := &s.recs[s.i]
	s.i++
	s.inf.infer(r, trace.NoTime) // a Record carries no G: unknown
	return r, nil
}

func (s *sliceSource) close() {
	if s.done != nil {
		s.done()
		s.done = nil
	}
}

// ioSpan is a request's time on the device, from its issue (D) to its
// completion (C).
type ioSpan struct{ issue, done trace.Time }

// maxInFlight returns the most requests on the device at once over spans,
// each distinct span counted once (bios sharing a request share its
// span); spans is reordered. A completion at an instant counts before an
// issue at it.
func maxInFlight(spans []ioSpan) int {
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].issue != spans[j].issue {
			return spans[i].issue < spans[j].issue
		}
		return spans[i].done < spans[j].done
	})
	type mark struct {
		t trace.Time
		d int
	}
	marks := make([]mark, 0, 2*len(spans))
	for i, sp := range spans {
		if i > 0 && sp == spans[i-1] {
			continue
		}
		marks = append(marks, mark{sp.issue, 1}, mark{sp.done, -1})
	}
	sort.Slice(marks, func(i, j int) bool {
		if marks[i].t != marks[j].t {
			return marks[i].t < marks[j].t
		}
		return marks[i].d < marks[j].d
	})
	cur, most := 0, 0
	for _, m := range marks {
		cur += m.d
		most = max(most, cur)
	}
	return most
}

// inferrer applies the closed-loop rule (Workload) to records given in
// each process's order. Its memory is per process: the completions of bios
// still in flight at the last Q seen.
type inferrer struct {
	procs map[uint32]*inferProc
	// Completions of every process's bios, for cross-process edges: the
	// pending ones (not yet at or before the last Q), and the latest two
	// passed of two different processes.
	pending doneHeap
	last    [2]doneMark
	pairs   map[[2]uint32]int // cross-process releases seen, by (releaser, released)
	cand    map[uint32]int    // sync writes queued with nothing in flight, by process
}

type inferProc struct {
	n       uint32
	lastQ   trace.Time
	pending doneHeap // captured completions of earlier bios, not yet passed
	passed  int64    // completions passed (at or before the last Q)
	depth   int64    // most bios in flight at a submission so far
	// passedAt holds the times of the passed completions from the
	// passedBase-th on (counted from 1), in completion order.
	passedAt   []trace.Time
	passedBase int64
	latestC    trace.Time
	latestR    *Record
	wake       trace.Time // Q_k - C_j of its latest dependent bio
	lastGot    trace.Time // got of its previous bio (NoTime: unknown)
	// plugOpen: its previous bio left a request on its plug that no
	// unplug flushed (Plugged, not PlugEnd).
	plugOpen bool
	lastDeps int64 // DepCount of its previous bio
}

func newInferrer() *inferrer {
	return &inferrer{procs: map[uint32]*inferProc{}, pairs: map[[2]uint32]int{}, cand: map[uint32]int{},
		last: [2]doneMark{{t: trace.NoTime}, {t: trace.NoTime}}}
}

// minTagSleep is the shortest time from a bio's Q to its G (or merge)
// taken as a sleep for a request or a tag rather than the cost of
// submitting it.
const minTagSleep = trace.Time(50_000)

// Cross-process edges (step 6 of the rule on Workload).
const (
	// crossRepeat: the releases of one process by another seen before one
	// is replayed as an edge.
	crossRepeat = 2
	// crossShare: an edge is replayed only while the pair accounts for at
	// least 1/crossShare of the released process's synchronous writes
	// queued with nothing in flight: fio's fsync writes are all released
	// by jbd2 and jbd2's journal blocks (half its writes, the other half
	// its commit blocks) by fio, while eight independent direct writers
	// (c-bfq-8randwrite-root) release each other by coincidence for
	// under 1 % of their writes.
	crossShare = 4
)

// syncWrite reports whether cat is a synchronous write (REQ_SYNC, FUA or
// a flush): the completions another process waits on (an fsync's data, a
// journal commit, a WAL flush). Reads and writeback are not taken as
// releasing another process.
func syncWrite(cat trace.Category) bool {
	return cat.IsWrite() && cat&(trace.CatSync|trace.CatFUA|trace.CatFlush) != 0
}

// orderedWrite reports whether cat is a FUA or PREFLUSH write: a journal
// commit record (jbd2_journal_commit_transaction submits it once the
// transaction's journal blocks have completed), an fsync's flush, an
// O_DSYNC write, each ordered after the writes its process saw complete.
// A plain REQ_SYNC write (O_DIRECT, a journal block) is not: fio's direct
// writers keep their depth in flight and reap late (f-kyber-mixed,
// raw-sweep-none: taking their writes as waiting for all their I/O moved
// them 5 and 9 points).
func orderedWrite(cat trace.Category) bool {
	return cat.IsWrite() && cat&(trace.CatFUA|trace.CatFlush) != 0
}

// passGlobal moves the completions at or before t to last.
func (f *inferrer) passGlobal(t trace.Time) {
	for len(f.pending) > 0 && f.pending[0].t <= t {
		d := f.pending.pop()
		switch {
		case f.last[0].r != nil && f.last[0].r.PID == d.r.PID:
			f.last[0] = d
		default:
			f.last[1], f.last[0] = f.last[0], d
		}
	}
}

// releaser returns the latest completion before Q of a process other
// than pid, if any.
func (f *inferrer) releaser(pid uint32) doneMark {
	for _, d := range f.last {
		if d.r != nil && d.r.PID != pid {
			return d
		}
	}
	return doneMark{t: trace.NoTime}
}

// infer sets r's release (Dep, DepCount, Think, Open, wake and its
// releaser) from the records before it; got is r's captured got: the time
// it got its request or merged (G, M or F of it), NoTime when unknown,
// the end of its submission after any sleep for a request or a tag.
func (f *inferrer) infer(r *Record, got trace.Time) {
	p := f.procs[r.PID]
	first := p == nil
	if first {
		p = &inferProc{latestC: trace.NoTime, lastGot: trace.NoTime}
		f.procs[r.PID] = p
	}
	// Step 2: pass every earlier completion at or before Q_k.
	for len(p.pending) > 0 && p.pending[0].t <= r.Queue {
		d := p.pending.pop()
		p.passed++
		if p.passedBase == 0 {
			p.passedBase = 1
		}
		p.passedAt = append(p.passedAt, d.t)
		if d.t >= p.latestC {
			p.latestC, p.latestR = d.t, d.r
		}
	}
	f.passGlobal(r.Queue)
	ownLatest, inflightBefore := p.latestC, int64(p.n)-p.passed
	r.Dep, r.DepCount, r.Think, r.Open, r.wake = -1, 0, 0, false, 0
	r.setAfter(nil, 0)
	// Step 2: the depth, counting bio k itself.
	if inflight := int64(p.n) - p.passed + 1; inflight > p.depth {
		p.depth = inflight
	}
	if need := int64(p.n) + 1 - p.depth; need > 0 {
		r.DepCount = need
	}
	async := r.Cat.IsWrite() && r.Cat&(trace.CatSync|trace.CatFUA|trace.CatFlush) == 0
	// Step 3d: a process that kept a request on its plug from its
	// previous bio to this one did not sleep in between (a task that
	// sleeps flushes its plug: sched_submit_work -> blk_flush_plug, the
	// UT), so no completion released this bio, and it needs no more of
	// them than its previous bio did.
	awake := p.plugOpen && r.Plugged
	if awake && r.DepCount > p.lastDeps {
		r.DepCount = p.lastDeps
	}
	depthNeed := r.DepCount // before step 3b raises it
	switch {
	case first || async:
		r.Open, r.DepCount = true, 0
	case p.latestR != nil && p.latestC >= p.lastQ && !awake:
		r.Dep, r.Think = int64(p.latestR.Index), r.Queue-p.latestC
		p.wake = r.Think
		if i := r.DepCount - p.passedBase; r.DepCount > 0 && i >= 0 && i < int64(len(p.passedAt)) {
			if inflightBefore == 0 && (orderedWrite(r.Cat) || emptyFlush(p.latestR) || p.heldWait(p.passedAt[i])) {
				// Step 3b: a FUA or PREFLUSH write queued only once all
				// its process's I/O had completed waited for that I/O,
				// not for depth (jbd2's commit block after its journal
				// blocks, five or six of them in flight together). So
				// did a bio whose depth was free before the previous
				// one's Q while the scheduler held the latest I/O it
				// saw complete (step 3c). A reader or a direct writer
				// at full depth that reaps late (fio, CPU-bound) keeps
				// step 3. So did a bio whose process's latest completion
				// was its own empty PREFLUSH (step 3e).
				r.DepCount = p.passed
			} else {
				r.Think = r.Queue - p.passedAt[i]
			}
		} else if r.DepCount > p.passed {
			r.Think = 0 // the depth it needs freed up only after Q_k in the capture
		}
		p.latestR = nil // a completion releases one submission
	default:
		// The gap from the end of the previous bio's submission: a sleep
		// for a request or a tag (the source scheduler's, bfq_limit_depth,
		// nr_requests) is not the process's own (issue 10, item 4).
		// A Q to G of a few microseconds is the submission's own cost,
		// which the engine does not model; a longer one is a sleep.
		base := p.lastQ
		if p.lastGot.Valid() && p.lastGot-p.lastQ >= minTagSleep {
			base = p.lastGot
		}
		r.Think = r.Queue - base
	}
	if !r.Open && inflightBefore == 0 && syncWrite(r.Cat) && !awake {
		// Step 6: released by another process's completion.
		f.cand[r.PID]++
		since := max(ownLatest, p.lastQ)
		if x := f.releaser(r.PID); x.r != nil && x.r.Queue >= since {
			k := [2]uint32{x.r.PID, r.PID}
			near := 2*(r.Queue-x.t) <= r.Queue-since
			known := f.pairs[k] >= crossRepeat && crossShare*f.pairs[k] >= f.cand[r.PID]
			// A known pair releases it whenever the releaser's bio came
			// and went while it was idle, even when it took longer to
			// wake than the releaser's bio took (a loaded host): its
			// think time from its own completion would hold the
			// releaser's whole bio, as the source scheduler timed it.
			if known {
				d := r.Queue - x.t
				r.setAfter(x.r, d)
				// The other process's completion woke it, not its own
				// latest one (step 3 measured Q_k - C_j from that): its
				// wake-up delay, which its back-to-back bios keep after
				// their DepCount-th completion (step 4), is the edge's.
				p.wake = d
			}
			if near {
				f.pairs[k]++
			}
		}
	}
	r.wake = p.wake
	p.lastQ = r.Queue
	p.lastGot = got
	p.plugOpen = r.Plugged && !r.PlugEnd
	p.lastDeps = r.DepCount
	p.n++
	// Forget the completions no later bio can need: its depth-based
	// DepCount is at least this one's less the depth's growth. A step 3b
	// bio needs every completion, far more than its depth asks; trimming
	// by that count made the next ordered write's depth-based count fall
	// before the kept completions, and skipped its step 3b
	// (fs-mqdl-untar: sync's second superblock write, FUA, queued 7 us
	// after its own flush completed, was replayed without waiting for it).
	if drop := depthNeed - p.passedBase - maxDepthGrowth; drop > 64 && drop*2 >= int64(len(p.passedAt)) {
		n := copy(p.passedAt, p.passedAt[drop:])
		p.passedAt, p.passedBase = p.passedAt[:n], p.passedBase+drop
	}
	if r.Done.Valid() {
		p.pending.push(doneMark{r.Done, r})
		if syncWrite(r.Cat) {
			f.pending.push(doneMark{r.Done, r})
		}
	}
}

// emptyFlush reports whether r is an empty PREFLUSH bio (RWBS FWS with no
// data: blkdev_issue_flush, as fsync and fdatasync send it): its submitter
// sleeps until it completes (submit_bio_wait), so the process's next bio
// waited for that completion (step 3e).
func emptyFlush(r *Record) bool {
	return r != nil && r.Bytes == 0 && r.Cat.IsWrite() && r.Cat&trace.CatFlush != 0
}

// heldWait reports step 3c for a bio queued with nothing of its process
// in flight, freed is the capture's completion that gave it its depth:
// the process was not at its depth (freed came before its previous bio's
// Q) and its latest completed bio had waited minHeld or more from Q to D,
// held by the scheduler. It waited for that I/O: fio's rate limiter
// drains its in-flight I/O before it sleeps (io_u_quiesce), and in
// g-bfq-large-nomsg BFQ holds cg2's last three reads 8 ms at each of its
// budget timeouts while it serves cg1; fio queues again 89 us after the
// last of them completes. Step 3 would replay that hold, the source
// scheduler's, as 8 ms of the process's own think time from the old
// completion (issue 10, item 4, as for step 5's tag sleeps).
func (p *inferProc) heldWait(freed trace.Time) bool {
	j := p.latestR
	return freed < p.lastQ && j != nil && j.Issue.Valid() && j.Issue-j.Queue >= minHeld
}

// minHeld: the Q to D wait from which step 3c takes a bio as held by the
// scheduler rather than dispatched at once (BFQ serving another queue,
// mq-deadline's batches): far above a dispatch's own cost, a few
// microseconds, and below a slice_idle or a budget timeout.
const minHeld = trace.Time(1_000_000)

type doneMark struct {
	t trace.Time
	r *Record
}

// doneHeap is a min-heap of completions by (time, index).
type doneHeap []doneMark

func (h doneHeap) less(a, b int) bool {
	if h[a].t != h[b].t {
		return h[a].t < h[b].t
	}
	return h[a].r.Index < h[b].r.Index
}

func (h *doneHeap) push(d doneMark) {
	*h = append(*h, d)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *doneHeap) pop() doneMark {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s.less(r, l) {
			m = r
		}
		if !s.less(m, i) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// statsBuilder accumulates per-process and per-cgroup statistics.
type statsBuilder struct {
	procs map[uint32]*ProcessStats
	cgs   map[uint64]*CgroupStats
	start trace.Time
	end   trace.Time
}

func newStatsBuilder() *statsBuilder {
	return &statsBuilder{procs: map[uint32]*ProcessStats{}, cgs: map[uint64]*CgroupStats{}, start: trace.NoTime, end: trace.NoTime}
}

// addBio counts a bio queued at q and completed at done (NoTime: never).
func (s *statsBuilder) addBio(pid uint32, comm string, cg uint64, bytes uint32, q, done trace.Time) {
	p := s.proc(pid, comm, cg)
	s.addTo(p, s.cgroup(cg), bytes, q, done)
}

func (s *statsBuilder) proc(pid uint32, comm string, cg uint64) *ProcessStats {
	p := s.procs[pid]
	if p == nil {
		p = &ProcessStats{PID: pid, Comm: comm, Cgroup: cg, First: trace.NoTime, Last: trace.NoTime}
		s.procs[pid] = p
	}
	if p.Comm == "" {
		p.Comm = comm
	}
	return p
}

func (s *statsBuilder) cgroup(cg uint64) *CgroupStats {
	c := s.cgs[cg]
	if c == nil {
		c = &CgroupStats{ID: cg, First: trace.NoTime, Last: trace.NoTime}
		s.cgs[cg] = c
	}
	return c
}

// addTo counts a bio of process p in cgroup c.
func (s *statsBuilder) addTo(p *ProcessStats, c *CgroupStats, bytes uint32, q, done trace.Time) {
	p.Bios++
	c.Bios++
	if !p.First.Valid() || q < p.First {
		p.First = q
	}
	if !c.First.Valid() || q < c.First {
		c.First = q
	}
	if !s.start.Valid() || q < s.start {
		s.start = q
	}
	if done.Valid() {
		p.Bytes += uint64(bytes)
		c.Bytes += uint64(bytes)
		if done > p.Last {
			p.Last = done
		}
		if done > c.Last {
			c.Last = done
		}
		if done > s.end {
			s.end = done
		}
	}
}

func (s *statsBuilder) add(r *Record) {
	s.addBio(r.PID, r.Comm, r.Cgroup, r.Bytes, r.Queue, r.Done)
}

func (s *statsBuilder) lists() ([]ProcessStats, []CgroupStats) {
	ps := make([]ProcessStats, 0, len(s.procs))
	for _, p := range s.procs {
		ps = append(ps, *p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].PID < ps[j].PID })
	cs := make([]CgroupStats, 0, len(s.cgs))
	for _, c := range s.cgs {
		cs = append(cs, *c)
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].ID < cs[j].ID })
	return ps, cs
}

func (s *statsBuilder) finish(w *Workload) {
	w.Processes, w.Cgroups = s.lists()
	w.Start, w.End = s.start, s.end
}
