package replay

import "github.com/tracesched/tracesched/trace"

// Request is a request in the model: one or more bios the engine merged,
// held by the scheduler between Insert and Dispatch, then by the device.
// The engine owns it; schedulers read its fields and keep their own state
// in Sched (the kernel's rq->elv.priv).
type Request struct {
	ID       uint64         // unique within a replay, in creation order, from 1
	PID      uint32         // process of its first bio
	Comm     string         // name of that process ("" when unknown)
	Cgroup   uint64         // cgroup id of its first bio (0: root or unknown)
	Sector   uint64         // start sector, 512-byte units
	Bytes    uint32         // size, grows with merges
	Cat      trace.Category // operation and flags (OpFlags only)
	Bios     int            // bios merged into it, the first included
	Queued   trace.Time     // arrival of its first bio (Q)
	Inserted trace.Time     // when the engine inserted it into the scheduler (I)
	Issued   trace.Time     // when it was dispatched to the device (D); NoTime before
	Sched    any            // scheduler-private state; the engine never reads it

	eng engineState // engine bookkeeping
}

// End returns the first sector after the request.
func (r *Request) End() uint64 { return r.Sector + uint64(r.Bytes>>9) }

// IsWrite reports whether the request writes (writes, discards, flushes).
func (r *Request) IsWrite() bool { return r.Cat.IsWrite() }

// IsSync reports whether the request is synchronous as the kernel's
// op_is_sync counts it: every read, and writes with REQ_SYNC, FUA or flush.
func (r *Request) IsSync() bool {
	return !r.Cat.IsWrite() || r.Cat&(trace.CatSync|trace.CatFUA|trace.CatFlush) != 0
}

// Bio is one bio of the workload as it reaches the scheduler's merge hooks.
type Bio struct {
	PID    uint32
	Index  uint32 // position in its process's stream
	Cgroup uint64
	Sector uint64
	Bytes  uint32
	Cat    trace.Category
}

// End returns the first sector after the bio.
func (b *Bio) End() uint64 { return b.Sector + uint64(b.Bytes>>9) }

// Merge says where a bio joins a request.
type Merge uint8

const (
	NoMerge    Merge = iota
	BackMerge        // the bio continues the request: bio.Sector == rq.End()
	FrontMerge       // the bio precedes the request: bio.End() == rq.Sector
)

// Scheduler is an I/O scheduler model, driven through hooks shaped like
// the kernel's blk-mq elevator operations (struct elevator_mq_ops). All
// times are the engine's simulated time, passed in; a scheduler never reads
// a clock. Hooks are called from one goroutine, in simulated-time order.
//
// Merging follows elv_merge: the engine finds back-merge candidates itself
// (the elevator hash, by end sector, over requests the scheduler holds),
// asks the scheduler for a front-merge candidate (RequestMerge), and checks
// every bio merge with AllowMerge. Request-request merges are not checked
// with AllowMerge, as in the kernel: the insert merge
// (elv_attempt_insert_merge, block/elevator.c) takes any held request
// ending where the new one starts, whatever its queue, and merges again
// while the grown request finds one; the merge after a bio merge takes
// only the request's neighbour in the scheduler's sort tree (Neighbours).
type Scheduler interface {
	// Name returns the scheduler's name as sysfs spells it ("bfq", "mq-deadline", "none").
	Name() string

	// AllowMerge reports whether bio may merge into rq, a request the
	// scheduler holds (elevator allow_merge; BFQ allows a merge only within
	// the bio's own queue).
	AllowMerge(rq *Request, bio *Bio) bool
	// RequestMerge returns a request the scheduler holds that bio can be
	// merged in front of (bio.End() == rq.Sector), or nil (request_merge).
	RequestMerge(now trace.Time, bio *Bio) *Request
	// RequestMerged tells the scheduler that rq grew by a bio merged at its
	// back or front (request_merged); a front merge changes rq.Sector.
	RequestMerged(now trace.Time, rq *Request, how Merge)
	// RequestsMerged tells the scheduler that next was merged into rq and is
	// gone: the scheduler must forget next (requests_merged).
	RequestsMerged(now trace.Time, rq, next *Request)

	// Insert hands the scheduler a new request (insert_requests).
	Insert(now trace.Time, rq *Request)
	// HasWork reports whether Dispatch may return a request now (has_work).
	HasWork(now trace.Time) bool
	// Dispatch returns the next request for the device, or nil when the
	// scheduler has none it wants to issue now, for instance while idling
	// (dispatch_request). The request leaves the scheduler.
	Dispatch(now trace.Time) *Request
	// Completed tells the scheduler that rq completed on the device
	// (completed_request, then finish_request).
	Completed(now trace.Time, rq *Request)
	// Timer fires a timer the scheduler armed with Host.ArmTimer.
	Timer(now trace.Time, id int)
}

// Neighbours is implemented by schedulers with the elevator's
// next_request and former_request hooks (elv_rb_latter_request,
// elv_rb_former_request on the sort tree the request is on: mq-deadline's
// per-direction tree, BFQ's and CFQ's per-queue trees). After a bio
// merge the engine tries a request-request merge only with these
// neighbours (attempt_back_merge, attempt_front_merge in
// block/blk-merge.c), so it never joins requests of two queues there.
// Without it the engine looks the neighbour up in its own hash by sector.
type Neighbours interface {
	// LatterRequest returns the request after rq in its sort tree, or nil.
	LatterRequest(rq *Request) *Request
	// FormerRequest returns the request before rq in its sort tree, or nil.
	FormerRequest(rq *Request) *Request
}

// RequestMergeAllower is implemented by single-queue schedulers of the
// legacy block layer (Linux 4.19 CFQ) whose elevator_allow_rq_merge_fn
// blk_attempt_req_merge consults before an insert merge; blk-mq's
// elevators have no such hook.
type RequestMergeAllower interface {
	// AllowRequestMerge reports whether next, a request not yet inserted,
	// may be merged into rq, a held request (cfq_allow_rq_merge: the same
	// queue).
	AllowRequestMerge(rq, next *Request) bool
}

// CgroupMergeRule is implemented by models of a kernel whose block layer
// predates blk_cgroup_mergeable (Linux 5.18, 6b2b04590b51 "block: dont
// merge across cgroup boundaries if blkcg is enabled"). Without it
// blk_rq_merge_ok, ll_new_hw_segment and ll_merge_requests_fn do not ask
// that a bio and a request share a cgroup and agree on REQ_META: in Linux
// 4.19 (CFQ) a metadata bio joins a data request of the same queue, and
// only the scheduler's allow_merge hooks keep queues apart. The commit was
// marked for stable 4.19+, so a late 4.19.y may carry it; the CFQ model is
// 4.19 as released. A scheduler that does not implement it gets the rule.
type CgroupMergeRule interface {
	// CgroupMergeable reports whether the modelled block layer applies
	// blk_cgroup_mergeable.
	CgroupMergeable() bool
}

// DepthLimiter is implemented by schedulers with a limit_depth hook
// (bfq_limit_depth, dd_limit_depth): the shallow depth of the scheduler
// tag bitmap a request may allocate from. With a DepthLimiter the engine
// keeps the one hardware queue's scheduler tags (NrRequests bits) as
// lib/sbitmap.c does (tags.go): a shallow depth d, in tags of the whole
// bitmap as data->shallow_depth is since Linux 6.17, leaves word i its
// first __map_depth_with_shallow(i, d) bits, so which bits are in use
// matters, not only how many (d = 1 is bit 0 of word 0). A per-word depth
// w of older kernels is d = NrRequests*w >> shift (w bits in every full
// word). LimitDepth is asked once an allocation: a process that sleeps
// for a tag keeps its depth until it gets one (blk_mq_get_tag).
type DepthLimiter interface {
	// LimitDepth returns the shallow depth, in tags of the whole bitmap,
	// for the request bio asks for, or 0 for no limit. bio is valid
	// during the call.
	LimitDepth(now trace.Time, bio *Bio) int
}

// ProcessExiter is implemented by schedulers that act when a process will
// send no more I/O (bfq_exit_icq, cfq_exit_icq). The engine calls it after
// the last completion of a process whose stream is exhausted.
type ProcessExiter interface {
	ProcessExited(now trace.Time, pid uint32)
}

// Host is what the engine offers a scheduler.
type Host interface {
	// ArmTimer schedules Scheduler.Timer(at, id). Arming an id that is
	// pending replaces it. at must not be before the current time.
	ArmTimer(id int, at trace.Time)
	// CancelTimer cancels the pending timer id, if any.
	CancelTimer(id int)
	// Kick asks the engine for a dispatch round once the current hook
	// returns (blk_mq_run_hw_queues).
	Kick()
	// Log records a decision as a message event of the prediction, in the
	// kernel's own form ("bfq1234S expire (2, slow 0, ...)"), attributed to
	// pid and cgroup as the kernel attributes its messages.
	Log(now trace.Time, pid uint32, cgroup uint64, text string)
	// InDriver returns the number of requests issued and not yet completed.
	InDriver() int
	// Queue describes the modelled request queue.
	Queue() Queue
}

// Queue holds the properties of the request queue being modelled, as
// sysfs names them under /sys/block/DEV/queue/.
type Queue struct {
	Rotational bool   // queue/rotational
	Depth      int    // hardware queue depth: most requests on the device at once
	NrRequests int    // queue/nr_requests: most requests allocated at once
	MaxSectors uint32 // queue/max_sectors_kb * 2: largest request, in sectors
	// MaxSegments is queue/max_segments: the most physical segments of a
	// request (0: 128, BLK_MAX_SEGMENTS). A bio's segments are
	// Record.Segments.
	MaxSegments int
	// WriteCache is queue/write_cache; WriteCacheAuto takes the workload's
	// (Workload.WriteCache, Workload.FUA) for both it and FUA.
	WriteCache WriteCache
	FUA        bool // queue/fua: the device honours REQ_FUA itself
	// WBTLat is queue/wbt_lat_usec, the writeback throttle's latency
	// target (wbt.go); 0 (the default) leaves the throttle out of the
	// replay: a capture's asynchronous writes then go to their requests as
	// they arrive. A scheduler that disables the throttle
	// (WritebackThrottleDisabler: BFQ, CFQ) turns it off whatever this says.
	WBTLat trace.Time
	// QueueDepth is blk_queue_depth, the tag set's depth (a capture's
	// hw_queue_depth), which the writeback throttle scales from; 0: Depth.
	QueueDepth int
}

// Device is a device timing model.
type Device interface {
	// Issue starts rq on the device at now and returns when it completes
	// (never before now). The device tracks its own state: head position,
	// requests in service.
	Issue(now trace.Time, rq *Request) trace.Time
	// Done tells the device that rq completed at now.
	Done(now trace.Time, rq *Request)
}

// Options are the user's settings for a scheduler model, from the command
// line (--set, --weight, --kernel, --feature).
type Options struct {
	// Set holds sysfs attributes under queue/iosched/ (slice_idle_us=2000).
	Set map[string]string
	// Weights maps cgroup ids to weights (cgroup v1 blkio.bfq.weight / blkio.weight).
	Weights map[uint64]int
	// CgroupPaths maps cgroup ids to their paths ("/tsched-cg1"), for the hierarchy.
	CgroupPaths map[uint64]string
	// Kernel selects the behaviour of a kernel version ("6.18", "5.11").
	Kernel string
	// Features flips single historical behaviours by name.
	Features map[string]bool
	// HZ is the kernel's tick rate where a model counts jiffies (default 250).
	HZ int
	// IOPrio maps PIDs to I/O priorities (--ioprio PID=be/4, or a
	// manifest's process list; NiceIOPrio for a nice value); a process not
	// listed has DefaultIOPrio.
	IOPrio map[uint32]IOPrio
	// Warm is the state the scheduler had when the capture began, as its
	// own messages show it, for a capture replayed through the scheduler
	// it was recorded under (BFQ: "max_budget", the auto-tuned
	// bfq_max_budget in sectors); nil: a scheduler just initialised.
	Warm map[string]int64
}

// IOPrioOf returns pid's I/O priority in o.
func (o Options) IOPrioOf(pid uint32) IOPrio {
	if p, ok := o.IOPrio[pid]; ok && p.Class != IOPrioNone {
		return p
	}
	return DefaultIOPrio
}
