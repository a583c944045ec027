package replay

import "github.com/tracesched/tracesched/trace"

// WritebackThrottleDisabler is implemented by schedulers that turn
// writeback throttling off while they run (ELEVATOR_FLAG_DISABLE_WBT:
// BFQ, whose bfq_init_queue sets it, and CFQ, which calls
// wbt_disable_default). The engine models blk-wbt for every other
// scheduler, none included.
type WritebackThrottleDisabler interface {
	DisablesWBT() bool
}

// The constants of block/blk-wbt.c (6.18).
const (
	wbtDefDepth       = 16                         // RWB_DEF_DEPTH
	wbtWindow         = trace.Time(100 * 1000_000) // RWB_WINDOW_NSEC
	wbtMinWriteSample = 3                          // RWB_MIN_WRITE_SAMPLES
	wbtUnknownBump    = 5                          // RWB_UNKNOWN_BUMP
)

// wbt is blk-wbt (block/blk-wbt.c, block/blk-rq-qos.c, Linux 6.18) as the
// engine models it: the writeback throttle between a bio's failed merge
// and its request (rq_qos_throttle in blk_mq_submit_bio).
//
// Which bios: wbt_should_throttle throttles every write except O_DIRECT
// ones (REQ_SYNC|REQ_IDLE) and every discard. A trace records REQ_SYNC
// but not REQ_IDLE, so an O_DIRECT write and a WB_SYNC_ALL writeback
// write (fsync's data, RWBS WS both) cannot be told apart; jbd2's journal
// writes carry REQ_SYNC|REQ_IDLE (JBD2_JOURNAL_REQ_FLAGS) and are not
// throttled either. The model throttles what is certainly throttled: the
// asynchronous writes (no REQ_SYNC, FUA or PREFLUSH: the flusher's
// writeback) and discards; sync writes are not tracked. get_limit: a
// discard gets wb_background; a write wb_background while I/O is close (a
// read submitted or completed within HZ/10, close_io), else wb_normal.
// REQ_BACKGROUND (kupdate and background writeback, not the WB_SYNC_NONE
// pass of sync(2)) would give wb_background always; a trace does not
// record it and the model takes it as absent. REQ_HIPRIO and kswapd are
// never asynchronous writes. A task's
// recent sleep in balance_dirty_pages (wb_recent_wait) is not in a trace
// either; the model takes it as present throughout when the capture had
// more asynchronous writes on the device at once than any wb_normal
// allows (Workload.WBTPeak over (max_depth+1)/2 at the highest step:
// fs-mqdl-untar's flusher had 53 where 48 is the most without it), else
// as absent. With it a write's limit is max_depth and sleepers wake at
// wb_normal also on a write-back cache.
//
// The limits scale as wb_timer_fn scales them: every window (100 ms, less
// at a positive step) the completions' D2C are sampled per direction
// (blk_stat, wbt_data_dir); latency_exceeded compares the smallest read
// latency with the target (Queue.WBTLat) or finds a read issued longer
// than the window ago still in flight; scale_up and scale_down move
// scale_step and rq_depth_calc_max_depth derives max_depth (16 at step 0,
// from the queue's depth), wb_normal ((max+1)/2) and wb_background
// ((max+3)/4). fs-mqdl-writeback shows each step: the flusher's 1.25 MiB
// writes go 4 at a time from 0.32 s, 8 from 0.57 s, 16 from 0.82 s, 24
// (max_depth 96, three quarters of the tag set's 128) from 0.84 s, and 4
// again at 0.95 s, after a window whose every read took more than 11 ms
// (the target is 2 ms: hard throttle, step 0).
//
// The throttle starts as the capture shows it began (Workload.WBTWarm,
// warm). It is off unless Queue.WBTLat is set: on by default it lost
// fs-mqdl-wbpressure's bandwidth targets (its flusher at one write in
// flight, as in the capture, where the device model serves a write 10 %
// slower than the capture's device did).
//
// Waking (wbt_rqw_done): on a device with a write-back cache (QUEUE_FLAG_WC)
// and no recent wait, sleepers are woken only once the tracked requests in
// flight drop to 0; otherwise when they are below wb_normal by
// wb_background/2 or more. Woken sleepers take their turn in FIFO order
// until one is over the limit (rq_qos_wake_function); a bio that arrives
// while others sleep sleeps behind them (rq_qos_wait).
type wbt struct {
	minLat     trace.Time // rwb->min_lat_nsec
	wc         bool       // QUEUE_FLAG_WC
	queueDepth int        // rq_depth.queue_depth (blk_queue_depth)

	scaleStep  int  // rq_depth.scale_step
	scaledMax  bool // rq_depth.scaled_max
	maxDepth   int  // rq_depth.max_depth
	normal, bg int  // wb_normal, wb_background
	unknown    int  // unknown_cnt
	inflight   int  // tracked requests allocated and not yet freed (rq_wait[WBT_RWQ_BG].inflight)
	sleepers   []*Record
	sleepHead  int
	timerArmed bool       // the blk_stat callback is active (a window is open)
	gen        uint64     // the pending window's generation
	curWin     trace.Time // cur_win_nsec
	reads      int        // samples of the open window, by direction
	writes     int
	readMin    trace.Time
	syncIssue  trace.Time // rwb->sync_issue, NoTime when unset
	syncCookie *Request   // rwb->sync_cookie
	lastRead   trace.Time // the later of last_issue and last_comp (reads), NoTime when none
	recentWait bool       // wb_recent_wait, taken as constant (see wbt)
}

// newWBT returns the throttle for queue q, nil when it is off.
func newWBT(q Queue, sched Scheduler) *wbt {
	if d, ok := sched.(WritebackThrottleDisabler); ok && d.DisablesWBT() {
		return nil
	}
	lat := q.WBTLat
	if lat <= 0 {
		return nil
	}
	depth := q.QueueDepth
	if depth <= 0 {
		depth = q.Depth
	}
	w := &wbt{minLat: lat, wc: q.WriteCache != WriteThrough, queueDepth: max(depth, 1), syncIssue: trace.NoTime, lastRead: trace.NoTime}
	w.calcMaxDepth()
	w.calcLimits()
	return w
}

// wbtCloseIO is HZ/10 of close_io, as time.
const wbtCloseIO = trace.Time(100 * 1000_000)

// limit is get_limit for r at now (see wbt).
func (w *wbt) limit(r *Record, now trace.Time) int {
	if r.Cat&trace.CatDiscard == 0 && w.recentWait {
		return w.maxDepth
	}
	if r.Cat&trace.CatDiscard != 0 || w.lastRead.Valid() && now-w.lastRead < wbtCloseIO {
		return w.bg
	}
	return w.normal
}

// tracks reports whether wbt throttles r (see wbt).
func (w *wbt) tracks(r *Record) bool { return wbtAsync(r.Cat, r.Bytes) }

// wbtAsync reports whether a bio or request of category cat and bytes is
// one the model's throttle tracks: a discard, or a write without
// REQ_SYNC, FUA or PREFLUSH (see wbt).
func wbtAsync(cat trace.Category, bytes uint32) bool {
	if cat&trace.CatDiscard != 0 {
		return true
	}
	return cat.IsWrite() && cat&(trace.CatSync|trace.CatFUA|trace.CatFlush) == 0 && bytes > 0
}

// warm starts the throttle as the capture shows it began: scaled up until
// wb_background lets warm asynchronous writes in flight at once (the most
// the capture had within 100 ms of its first; Workload.WBTWarm). A
// capture that began with the limits scaled down shows only that it had
// few writes, which step 0 allows too: the model starts there.
func (w *wbt) warm(n int) {
	for w.bg < n && w.scaleUp() {
	}
}

// peak takes the capture's most asynchronous writes in flight at once
// (Workload.WBTPeak): over what wb_normal allows at the highest step
// ((3/4 of the queue depth + 1)/2), a writer had waited in
// balance_dirty_pages (see wbt).
func (w *wbt) peak(n int) {
	top := max(min(wbtDefDepth, w.queueDepth), 3*w.queueDepth/4)
	w.recentWait = n > (top+1)/2
}

// calcMaxDepth is rq_depth_calc_max_depth; it reports whether the depth
// hit its maximum (three quarters of the queue depth) scaling up.
func (w *wbt) calcMaxDepth() bool {
	if w.queueDepth == 1 {
		if w.scaleStep > 0 {
			w.maxDepth = 1
		} else {
			w.maxDepth = 2
			return true
		}
		return false
	}
	depth := min(wbtDefDepth, w.queueDepth)
	hitMax := false
	switch {
	case w.scaleStep > 0:
		depth = 1 + ((depth - 1) >> min(31, w.scaleStep))
	case w.scaleStep < 0:
		maxd := 3 * w.queueDepth / 4
		depth = 1 + ((depth - 1) << min(31, -w.scaleStep))
		if depth > maxd {
			depth = maxd
			hitMax = true
		}
	}
	w.maxDepth = depth
	return hitMax
}

// calcLimits is calc_wb_limits.
func (w *wbt) calcLimits() {
	if w.maxDepth <= 2 {
		w.normal, w.bg = w.maxDepth, 1
		return
	}
	w.normal, w.bg = (w.maxDepth+1)/2, (w.maxDepth+3)/4
}

// scaleUp is scale_up (rq_depth_scale_up); it reports whether the limits
// grew (and the sleepers are to be woken).
func (w *wbt) scaleUp() bool {
	if w.scaledMax {
		return false
	}
	w.scaleStep--
	w.scaledMax = w.calcMaxDepth()
	w.calcLimits()
	w.unknown = 0
	return true
}

// scaleDown is scale_down (rq_depth_scale_down).
func (w *wbt) scaleDown(hard bool) {
	if w.maxDepth == 1 {
		return
	}
	if w.scaleStep < 0 && hard {
		w.scaleStep = 0
	} else {
		w.scaleStep++
	}
	w.scaledMax = false
	w.calcMaxDepth()
	w.calcLimits()
	w.unknown = 0
}

// Latency verdicts of latency_exceeded.
const (
	latOK = iota + 1
	latUnknown
	latUnknownWrites
	latExceeded
)

// verdict is latency_exceeded at now, on the window's samples.
func (w *wbt) verdict(now trace.Time) int {
	var this trace.Time
	if w.syncCookie != nil && w.syncIssue.Valid() {
		this = now - w.syncIssue
	}
	if this > w.curWin || (this > w.minLat && w.reads == 0) {
		return latExceeded
	}
	if w.reads < 1 || w.writes < wbtMinWriteSample {
		if w.writes > 0 || w.recentWait || w.inflight > 0 {
			return latUnknownWrites
		}
		return latUnknown
	}
	if w.readMin > w.minLat {
		return latExceeded
	}
	return latOK
}

// window returns cur_win_nsec for the current step (rwb_arm_timer).
func (w *wbt) window() trace.Time {
	if w.scaleStep > 0 {
		return trace.Time((uint64(wbtWindow) << 4) / isqrt(uint64(w.scaleStep+1)<<8))
	}
	return wbtWindow
}

// isqrt is int_sqrt: the integer square root, rounded down.
func isqrt(x uint64) uint64 {
	r := uint64(0)
	for b := uint64(1) << 62; b > 0; b >>= 2 {
		if x >= r+b {
			x -= r + b
			r = r>>1 + b
		} else {
			r >>= 1
		}
	}
	return r
}

// --- the engine's side ---

// wbtArm opens a stat window (rwb_arm_timer, blk_stat_activate_nsecs).
func (e *Engine) wbtArm() {
	w := e.wbt
	w.curWin = w.window()
	w.reads, w.writes, w.readMin = 0, 0, 0
	w.timerArmed = true
	w.gen++
	e.push(simEvent{at: e.now + w.curWin, kind: evWBT, arg: w.gen})
}

// wbtTimer is wb_timer_fn at the end of a window.
func (e *Engine) wbtTimer(gen uint64) {
	w := e.wbt
	if !w.timerArmed || gen != w.gen {
		return
	}
	w.timerArmed = false
	wake := false
	switch w.verdict(e.now) {
	case latExceeded:
		w.scaleDown(true)
	case latOK, latUnknownWrites:
		wake = w.scaleUp()
	case latUnknown:
		if w.unknown++; w.unknown >= wbtUnknownBump {
			if w.scaleStep > 0 {
				wake = w.scaleUp()
			} else if w.scaleStep < 0 {
				w.scaleDown(false)
			}
		}
	}
	// Re-armed with I/O in flight or off the centre step; a replay with
	// nothing else left to happen needs no more windows (the kernel's
	// would find nothing to sample).
	if (w.scaleStep != 0 || w.inflight > 0) && (len(e.events) > 0 || w.inflight > 0) {
		e.wbtArm()
	}
	if wake {
		e.wbtWake()
	}
}

// wbtWait is wbt_wait for r, a bio wbt tracks: it reports whether r got a
// token (rq_wait_inc_below) and may go on to its request; else r sleeps
// behind the earlier sleepers.
func (e *Engine) wbtWait(r *Record) bool {
	w := e.wbt
	ok := w.sleepHead == len(w.sleepers) && w.inflight < w.limit(r, e.now)
	if ok {
		w.inflight++
		r.wbtTracked = true
	} else {
		w.sleepers = append(w.sleepers, r)
	}
	if !w.timerArmed {
		e.wbtArm()
	}
	return ok
}

// wbtDone is wbt_done for a tracked request freed (completed, or merged
// into another): wbt_rqw_done.
func (e *Engine) wbtDone() {
	w := e.wbt
	w.inflight--
	limit := w.normal
	if w.wc && !w.recentWait {
		limit = 0
	}
	if w.inflight > 0 && w.inflight >= limit {
		return
	}
	if w.sleepHead < len(w.sleepers) && (w.inflight == 0 || limit-w.inflight >= w.bg/2) {
		e.wbtWake()
	}
}

// wbtWake is wake_up_all on the sleepers: each in turn takes a token while
// one is below the limit (rq_qos_wake_function) and goes on to its
// request.
func (e *Engine) wbtWake() {
	w := e.wbt
	for w.sleepHead < len(w.sleepers) && w.inflight < w.limit(w.sleepers[w.sleepHead], e.now) {
		r := w.sleepers[w.sleepHead]
		w.sleepers[w.sleepHead] = nil
		w.sleepHead++
		if w.sleepHead == len(w.sleepers) {
			w.sleepers, w.sleepHead = w.sleepers[:0], 0
		}
		w.inflight++
		r.wbtTracked = true
		r.proc.blocked = false
		e.allocBio(r.proc, r)
	}
}

// wbtComplete samples rq's D2C into the open window (blk_stat_add through
// wbt_data_dir) and clears the sync cookie (wbt_done for untracked
// requests).
func (e *Engine) wbtComplete(rq *Request) {
	w := e.wbt
	if w.syncCookie == rq {
		w.syncCookie, w.syncIssue = nil, trace.NoTime
	}
	if !rq.eng.flushRq && !rq.Cat.IsWrite() {
		w.lastRead = e.now // last_comp
	}
	if !w.timerArmed || !rq.Issued.Valid() || rq.eng.flushRq {
		return
	}
	lat := max(e.now-rq.Issued, 0)
	switch {
	case !rq.Cat.IsWrite():
		if w.reads == 0 || lat < w.readMin {
			w.readMin = lat
		}
		w.reads++
	case rq.Cat.IsWrite():
		w.writes++
	}
}

// wbtIssue is wbt_issue: the first read issued while none is tracked
// becomes the sync cookie.
func (e *Engine) wbtIssue(rq *Request) {
	w := e.wbt
	if !rq.Cat.IsWrite() && !rq.eng.flushRq && w.syncCookie == nil {
		w.syncCookie, w.syncIssue = rq, e.now
	}
}
