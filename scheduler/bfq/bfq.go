// Package bfq models the Linux BFQ I/O scheduler (block/bfq-iosched.c,
// block/bfq-wf2q.c, block/bfq-cgroup.c) for replay: hierarchical B-WF2Q+
// with groups per cgroup, budgets auto-tuned from the observed peak rate,
// idling, think time and seekiness in the kernel's integer arithmetic,
// queue merging (close cooperators, stable merge, split), weight raising
// and a subset of injection. Historical behaviours are switches (Features)
// grouped into kernel presets (--kernel 5.10 … 6.18).
//
// The model follows /work/shared/docs/bfq-model.md; each rule names the
// kernel function it mirrors. Times are the engine's simulated
// nanoseconds; jiffies are derived as floor(ns·HZ/1e9) wherever the
// kernel counts jiffies.
package bfq

import (
	"fmt"
	"iter"
	"sort"
	"strconv"
	"strings"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// DefaultMaxBudget is bfq_default_max_budget, sectors: the max budget of a
// BFQ that has not yet tuned it (Options.Warm "max_budget" gives another).
const DefaultMaxBudget = defaultMaxBudget

// Kernel constants (bfq-iosched.c, bfq-iosched.h).
const (
	defaultMaxBudget    = 16 * 1024 // bfq_default_max_budget, sectors
	statsMinBudgets     = 194       // bfq_stats_min_budgets
	asyncChargeFactor   = 3         // bfq_async_charge_factor
	minTTns             = 2000000   // BFQ_MIN_TT, 2 ms
	defaultSliceIdleNs  = 8000000   // bfq_slice_idle, NSEC_PER_SEC/125
	seekThr             = 8 * 100   // BFQQ_SEEK_THR, sectors
	sectThrNonrot       = 2 * 32    // BFQQ_SECT_THR_NONROT, sectors
	closeThr            = 8 * 1024  // BFQQ_CLOSE_THR, sectors
	rateMinSamples      = 32        // BFQ_RATE_MIN_SAMPLES
	rateMinIntervalNs   = 300000000 // BFQ_RATE_MIN_INTERVAL
	rateRefIntervalNs   = 1000000000
	rateShift           = 16     // BFQ_RATE_SHIFT
	hwQueueThreshold    = 3      // BFQ_HW_QUEUE_THRESHOLD
	hwQueueSamples      = 32     // BFQ_HW_QUEUE_SAMPLES
	wrCoeffDefault      = 30     // bfq_wr_coeff
	softrtWeightFactor  = 100    // BFQ_SOFTRT_WEIGHT_FACTOR
	wrMaxSoftrtRate     = 7000   // bfq_wr_max_softrt_rate, sectors/s
	maxServiceFromWr    = 120000 // max_service_from_wr, sectors
	largeBurstThresh    = 8      // bfq_large_burst_thresh
	ioprioNrLevels      = 8      // IOPRIO_NR_LEVELS
	weightConvCoeff     = 10     // BFQ_WEIGHT_CONVERSION_COEFF
	defaultIoprio       = 4      // IOPRIO_BE_NORM
	defaultGroupWeight  = 100    // BFQ_WEIGHT_LEGACY_DFL
	minWeight           = 1      // BFQ_MIN_WEIGHT
	maxWeight           = 1000   // BFQ_MAX_WEIGHT
	stableMergeMs       = 600    // bfq_activation_stable_merging, bfq_late_stable_merging
	requestsWithinTimer = 120    // bfq_requests_within_timer (≤ 5.11)
)

var refRate = [2]uint32{14000, 33000} // ref_rate[rot, nonrot], (sectors/µs) << 16

// Expiration reasons (enum bfqq_expiration).
const (
	expTooIdle         = 0 // BFQQE_TOO_IDLE
	expBudgetTimeout   = 1 // BFQQE_BUDGET_TIMEOUT
	expBudgetExhausted = 2 // BFQQE_BUDGET_EXHAUSTED
	expNoMoreRequests  = 3 // BFQQE_NO_MORE_REQUESTS
	expPreempted       = 4 // BFQQE_PREEMPTED
)

const idleTimerID = 1

// log levels
const (
	logNone = iota
	logDecisions
	logAll
)

// Scheduler is the BFQ model of one device (struct bfq_data).
type Scheduler struct {
	opts   replay.Options // the user's settings (IOPrio read by queue creation)
	logBuf []byte         // message buffer reused by logStart
	rqFree []*rqState     // recycled per-request states

	h    replay.Host
	feat features
	hz   int64

	now  trace.Time // current hook's time
	nowJ int64      // jiffies at now

	// tunables (bfq_attrs)
	sliceIdle        int64 // ns
	backMax          int   // KiB (bfq_back_max)
	backPenalty      int
	fifoExpire       [2]int64 // ns, [async, sync]
	lowLatency       bool
	strictGuarantees bool
	userMaxBudget    int // 0: auto
	// warmQueues is the state of processes' sync queues that existed
	// before the capture began (Options.Warm "pid.PID.NAME" keys), taken
	// by each process's first sync queue (warmQueue); only with the
	// warm-queues feature.
	warmQueues map[uint32]warmQ
	timeoutJ   int64 // bfqd->bfq_timeout, jiffies
	rotational bool
	logLevel   int

	// constants derived from HZ
	constTimeoutJ      int64 // global bfq_timeout = HZ/8
	wrRtMaxTimeJ       int64
	wrMinIdleTimeJ     int64
	wrMinInterArrAsync int64
	burstIntervalJ     int64
	rateDurProd        uint64

	root   *group
	groups map[uint64]*group
	paths  map[uint64]string
	wts    map[uint64]int
	bics   map[uint32]*bic
	comms  map[uint32]string // process names, from their first request

	inService *queue
	busy      [nClasses]int
	wrBusy    int
	queued    int
	inDriver  int

	hwTag              int // -1 unknown, 0, 1
	maxRqInDriver      int
	hwTagSamples       int
	nonrotWithQueueing bool

	budgetsAssigned int
	maxBudget       int // bfqd->bfq_max_budget

	peakRate         uint32
	peakRateSamples  uint32
	seqSamples       uint32
	totSectors       uint64
	lastRqMaxSize    uint32
	firstDispatch    int64
	lastDispatch     int64
	deltaFromFirst   int64
	lastCompletion   int64
	lastPosition     uint64
	inServLastPos    uint64
	lastBudgetStart  int64
	lastIdlingStart  int64
	lastIdlingStartJ int64

	queueWeights             []weightCount // sorted by weight
	numGroupsWithPendingReqs int

	// bursts (bfq_handle_burst)
	lastInsInBurst int64
	burstSize      int
	largeBurst     bool
	burstList      []*queue
	burstParent    *entity

	lastBfqqCreated      *queue // root-group queues
	lastCompletedRqBfqq  *queue
	rqsInjected          bool
	dispatchList         []*rqState // bfqd->dispatch: at-head inserts, head first
	waitDispatch         bool       // sample the next dispatched request (wait_dispatch)
	waitedRq             *rqState   // the request whose total service time is sampled
	lastEmptyOccupiedNs  int64
	activeList           []*queue // bfqd->active_list, most recent first
	idleTimerQ           *queue
	seq                  uint64
	wrLoggedThisSlot     bool
	inServiceSetAt       trace.Time
	nextQueueID          int
	totalDispatched      uint64
	totalExpirations     [5]uint64
	totalMerges          uint64
	totalSplits          uint64
	totalIdleArms        uint64
	totalStableScheduled uint64
}

type weightCount struct{ weight, n int }

// bic is a struct bfq_io_cq: one process's queues.
type bic struct {
	pid          uint32
	cgroup       uint64
	q            [2]*queue // [async, sync]
	stablyMerged bool
	stableMerge  *queue // stable_merge_bfqq
	requests     int    // requests allocated and not finished (bic->requests, 6.x)
	saved        savedState
	exited       bool
}

// savedState is the state saved in the bic across merge and split
// (bfq_bfqq_save_state / bfq_bfqq_resume_state).
type savedState struct {
	valid         bool
	ttime         ttime
	shortTtime    bool
	ioBound       bool
	inLargeBurst  bool
	ioStartTime   int64
	totIdleTime   int64
	wrCoeff       int
	wrCurMaxTime  int64
	lastWrStartFi int64
	serviceFromWr int
	weight        int
}

// group is a struct bfq_group.
type group struct {
	id             uint64
	path           string
	entity         *entity // nil for the root
	sd             schedData
	parent         *group
	activeEntities int
	numQueuesPend  int                 // num_queues_with_pending_reqs (≥ 6.2)
	asyncQ         map[asyncKey]*queue // async_bfqq[class][level], async_idle_bfqq
	posTree        []*queue            // rq_pos_tree, by next_rq sector
	lastBfqqCreate *queue
}

func (g *group) cgroupID() uint64 {
	if g.id == 0 {
		return 1
	}
	return g.id
}

// New returns a BFQ model configured by o: sysfs tunables in o.Set, cgroup
// weights and paths, the kernel preset and single feature overrides.
func New(h replay.Host, o replay.Options) (*Scheduler, error) {
	feat, err := resolveFeatures(o.Kernel, o.Features)
	if err != nil {
		return nil, err
	}
	hz := int64(o.HZ)
	if hz == 0 {
		hz = 250
	}
	if hz < 1 || hz > 10000 {
		return nil, fmt.Errorf("bfq: HZ %d out of range", o.HZ)
	}
	s := &Scheduler{
		h: h, feat: feat, hz: hz, opts: o,
		sliceIdle:   defaultSliceIdleNs,
		backMax:     16 * 1024,
		backPenalty: 2,
		fifoExpire:  [2]int64{250000000, 125000000},
		lowLatency:  true,
		logLevel:    logDecisions,
		groups:      map[uint64]*group{},
		bics:        map[uint32]*bic{},
		comms:       map[uint32]string{},
		paths:       o.CgroupPaths,
		wts:         map[uint64]int{},
		hwTag:       -1,
		maxBudget:   defaultMaxBudget,
	}
	s.constTimeoutJ = hz / 8
	s.timeoutJ = hz / 8
	s.wrRtMaxTimeJ = s.msecsToJiffies(300)
	s.wrMinIdleTimeJ = s.msecsToJiffies(2000)
	s.wrMinInterArrAsync = s.msecsToJiffies(500)
	s.burstIntervalJ = s.msecsToJiffies(180)
	s.rotational = h.Queue().Rotational
	for id, w := range o.Weights {
		if w < minWeight || w > maxWeight {
			return nil, fmt.Errorf("bfq: weight %d of cgroup %d out of range %d..%d", w, id, minWeight, maxWeight)
		}
		s.wts[id] = w
	}
	if err := s.applySet(o.Set); err != nil {
		return nil, err
	}
	nonrot := 0
	if !s.rotational {
		nonrot = 1
	}
	s.nonrotWithQueueing = !s.rotational
	s.peakRate = refRate[nonrot] * 2 / 3
	refWrDuration := [2]int64{s.msecsToJiffies(7000), s.msecsToJiffies(2500)}
	s.rateDurProd = uint64(refRate[nonrot]) * uint64(refWrDuration[nonrot])
	if s.userMaxBudget > 0 {
		s.maxBudget = s.userMaxBudget
	} else if mb := o.Warm["max_budget"]; mb > 0 {
		// A scheduler that has run before the capture: its peak rate
		// estimated (bfq_max_budget = peak_rate * timeout) and enough
		// budgets assigned (bfq_stats_min_budgets) for bfq_max_budget()
		// and bfq_min_budget() to use it; budgets_assigned converges to
		// 256 ((x*7 + 256) / 8).
		s.maxBudget = int(mb)
		s.budgetsAssigned = 256
		// The peak rate whose bfq_calc_max_budget gives mb back (rounded
		// up: the rate is kept to 1/65536 sector/us).
		to := uint64(s.jiffiesToMsecs(s.timeoutJ)) * 1000
		s.peakRate = uint32(max((uint64(mb)<<rateShift+to-1)/to, 1))
	}
	for k, v := range o.Warm {
		pid, name, ok := parseWarmQueueKey(k)
		if !ok || !s.feat.warmQueues {
			continue
		}
		if s.warmQueues == nil {
			s.warmQueues = map[uint32]warmQ{}
		}
		w := s.warmQueues[pid]
		switch name {
		case "max_budget":
			w.maxBudget = int(v)
		case "short_ttime":
			w.hasShort, w.short = true, v != 0
		}
		s.warmQueues[pid] = w
	}
	s.root = &group{id: 0, path: "/"}
	s.root.sd.owner = s.root
	s.root.sd.classIdleLastService = -1 << 40
	return s, nil
}

// queueAttrs are names under /sys/block/DEV/queue/ that Options.Set may
// carry beside the iosched ones; they are accepted and, but for rotational,
// ignored.
var queueAttrs = map[string]bool{
	"rotational": true, "nr_requests": true, "max_sectors_kb": true, "max_hw_sectors_kb": true,
	"nomerges": true, "read_ahead_kb": true, "rq_affinity": true, "wbt_lat_usec": true,
	"write_cache": true, "io_poll": true, "add_random": true, "logical_block_size": true,
	"physical_block_size": true, "max_segments": true, "scheduler": true, "iostats": true,
	"hw_queue_depth": true, "nr_hw_queues": true,
}

var ioschedAttrs = []string{"back_seek_max", "back_seek_penalty", "fifo_expire_async", "fifo_expire_sync",
	"low_latency", "max_budget", "slice_idle", "slice_idle_us", "strict_guarantees", "timeout_sync"}

// applySet stores sysfs attributes as bfq_*_store do. Keys are applied in
// sorted order, strict_guarantees last (it raises slice_idle).
func (s *Scheduler) applySet(set map[string]string) error {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		si, sj := keys[i] == "strict_guarantees", keys[j] == "strict_guarantees"
		if si != sj {
			return sj
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		v := strings.TrimSpace(set[k])
		name := replay.AttrName(k)
		if name == "log" {
			switch v {
			case "none", "off":
				s.logLevel = logNone
			case "", "decisions":
				s.logLevel = logDecisions
			case "all":
				s.logLevel = logAll
			default:
				return fmt.Errorf("bfq: log=%q: want none, decisions or all", v)
			}
			continue
		}
		if queueAttrs[name] {
			if name == "rotational" {
				n, err := strconv.Atoi(v)
				if err != nil {
					return fmt.Errorf("bfq: rotational=%q: %v", v, err)
				}
				s.rotational = n != 0
			}
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			if !isIoschedAttr(name) {
				return fmt.Errorf("bfq: unknown attribute %q (valid: %s)", k, strings.Join(ioschedAttrs, ", "))
			}
			return fmt.Errorf("bfq: %s=%q: not an integer", name, v)
		}
		// bfq_var_store reads with kstrtoul: a negative value is refused
		// (-EINVAL), not clamped.
		if n < 0 {
			return fmt.Errorf("bfq: %s=%q: the kernel refuses a negative value (bfq_var_store reads an unsigned number)", name, v)
		}
		// bfq_var_store / BFQ_ATTR store bounds.
		clamp := func(min, max int64) int64 {
			if n < min {
				return min
			}
			if n > max {
				return max
			}
			return n
		}
		const intMax = 1<<31 - 1
		switch name {
		case "back_seek_max":
			s.backMax = int(clamp(0, intMax))
		case "back_seek_penalty":
			s.backPenalty = int(clamp(1, intMax))
		case "fifo_expire_async":
			s.fifoExpire[0] = clamp(1, intMax) * 1000000
		case "fifo_expire_sync":
			s.fifoExpire[1] = clamp(1, intMax) * 1000000
		case "low_latency":
			s.lowLatency = clamp(0, 1) != 0
		case "max_budget":
			b := int(clamp(0, intMax))
			s.userMaxBudget = b
			if b == 0 {
				s.maxBudget = s.calcMaxBudget()
			} else {
				s.maxBudget = b
			}
		case "slice_idle":
			s.sliceIdle = clamp(0, intMax) * 1000000
		case "slice_idle_us":
			s.sliceIdle = clamp(0, intMax) * 1000
		case "strict_guarantees":
			s.strictGuarantees = clamp(0, 1) != 0
			if s.strictGuarantees && s.sliceIdle < 8000000 {
				s.sliceIdle = 8000000
			}
		case "timeout_sync":
			s.timeoutJ = s.msecsToJiffies(clamp(1, intMax))
			if s.userMaxBudget == 0 {
				s.maxBudget = s.calcMaxBudget()
			}
		default:
			return fmt.Errorf("bfq: unknown attribute %q (valid: %s)", k, strings.Join(ioschedAttrs, ", "))
		}
	}
	return nil
}

func isIoschedAttr(n string) bool {
	for _, a := range ioschedAttrs {
		if a == n {
			return true
		}
	}
	return false
}

// Name returns "bfq".
func (s *Scheduler) Name() string { return "bfq" }

// DisablesWBT reports that BFQ runs without writeback throttling
// (bfq_init_queue sets ELEVATOR_FLAG_DISABLE_WBT; the captures' manifests
// read wbt_lat_usec 0 under BFQ): replay.WritebackThrottleDisabler.
func (s *Scheduler) DisablesWBT() bool { return true }

// jiffies helpers (include/linux/jiffies.h), HZ from Options.HZ.
func (s *Scheduler) jiffiesAt(t trace.Time) int64 { return int64(t) * s.hz / 1000000000 }
func (s *Scheduler) msecsToJiffies(ms int64) int64 {
	return (ms*s.hz + 999) / 1000
}
func (s *Scheduler) jiffiesToMsecs(j int64) int64 { return (j*1000 + s.hz - 1) / s.hz }
func (s *Scheduler) nsecsToJiffies(ns int64) int64 {
	return ns * s.hz / 1000000000
}

func (s *Scheduler) setNow(now trace.Time) {
	s.now = now
	s.nowJ = s.jiffiesAt(now)
}

// smallestFromNow is bfq_smallest_from_now: a jiffies value far in the past.
func (s *Scheduler) smallestFromNow() int64 { return s.nowJ - (1 << 40) }

// calcMaxBudget is bfq_calc_max_budget.
func (s *Scheduler) calcMaxBudget() int {
	return int(uint64(s.peakRate) * 1000 * uint64(s.jiffiesToMsecs(s.timeoutJ)) >> rateShift)
}

// bfqMaxBudget is bfq_max_budget().
func (s *Scheduler) bfqMaxBudget() int {
	if s.budgetsAssigned < statsMinBudgets {
		return defaultMaxBudget
	}
	return s.maxBudget
}

// minBudget is bfq_min_budget().
func (s *Scheduler) minBudget() int {
	if s.budgetsAssigned < statsMinBudgets {
		return defaultMaxBudget / 32
	}
	return s.maxBudget / 32
}

// wrDuration is bfq_wr_duration, in jiffies, clamped to [3 s, 25 s].
func (s *Scheduler) wrDuration() int64 {
	d := int64(s.rateDurProd / uint64(s.peakRate))
	lo, hi := s.msecsToJiffies(3000), s.msecsToJiffies(25000)
	if d < lo {
		return lo
	}
	if d > hi {
		return hi
	}
	return d
}

func (s *Scheduler) totBusy() int { return s.busy[0] + s.busy[1] + s.busy[2] }

// logq logs a bfq_log_bfqq message.
func (s *Scheduler) logq(level int, q *queue, format string, args ...any) {
	if s.logLevel < level {
		return
	}
	text := q.name() + " " + fmt.Sprintf(format, args...)
	pid := q.lastPID
	if q.pid > 0 {
		pid = uint32(q.pid)
	}
	s.h.Log(s.now, pid, q.g.cgroupID(), text)
}

// logStart starts a bfq_log_bfqq message in the reused buffer: the queue's
// name, a space and head. Callers check the log level first, append the rest
// with strconv and hand the buffer to logEmit: no fmt, no boxing, one
// allocation (the string) per message.
func (s *Scheduler) logStart(q *queue, head string) []byte {
	b := append(s.logBuf[:0], q.name()...)
	b = append(b, ' ')
	return append(b, head...)
}

// logEmit sends a message built from logStart, as q.lastLog.
func (s *Scheduler) logEmit(q *queue, b []byte) {
	s.logBuf = b
	if string(b) != q.lastLog {
		q.lastLog = string(b)
	}
	pid := q.lastPID
	if q.pid > 0 {
		pid = uint32(q.pid)
	}
	s.h.Log(s.now, pid, q.g.cgroupID(), q.lastLog)
}

// logMayBudgetTimeout logs "may_budget_timeout: wait_request %d left %d
// timeout %d" (bfq_may_expire_for_budg_timeout; the idle-arm form says
// wait_request 1).
func (s *Scheduler) logMayBudgetTimeout(q *queue, waitRequest bool) {
	b := s.logStart(q, "may_budget_timeout: wait_request ")
	b = append(b, byte('0'+b2i(waitRequest)))
	b = append(b, " left "...)
	b = append(b, byte('0'+b2i(q.budgetLeft() >= q.entity.budget/3)))
	b = append(b, " timeout "...)
	b = append(b, byte('0'+b2i(s.budgetTimeout(q))))
	s.logEmit(q, b)
}

// logd logs a bfq_log message ("bfq " + text).
func (s *Scheduler) logd(level int, format string, args ...any) {
	if s.logLevel < level {
		return
	}
	s.h.Log(s.now, 0, 1, "bfq "+fmt.Sprintf(format, args...))
}

// Stats are counters of the model's decisions, for tests and reports.
type Stats struct {
	Dispatched  uint64
	Expirations [5]uint64 // by reason: TOO_IDLE, BUDGET_TIMEOUT, BUDGET_EXHAUSTED, NO_MORE_REQUESTS, PREEMPTED
	Merges      uint64    // queue merges executed (bfq_merge_bfqqs)
	Splits      uint64
	IdleArms    uint64 // idle timer armed (bfq_arm_slice_timer)
	PeakRate    uint32 // (sectors/µs) << 16
	MaxBudget   int    // bfqd->bfq_max_budget, sectors
	HWTag       int
}

// Stats returns the decision counters so far.
func (s *Scheduler) Stats() Stats {
	return Stats{Dispatched: s.totalDispatched, Expirations: s.totalExpirations, Merges: s.totalMerges,
		Splits: s.totalSplits, IdleArms: s.totalIdleArms, PeakRate: s.peakRate, MaxBudget: s.maxBudget, HWTag: s.hwTag}
}

// warmQ is a sync queue's state a capture's first messages show, for a
// process whose queue existed before the trace began.
type warmQ struct {
	maxBudget       int // bfqq->max_budget, sectors; 0: not shown
	hasShort, short bool
}

// WarmQueueKey is the Options.Warm key of a process's sync-queue state:
// "pid.PID.max_budget" (sectors) or "pid.PID.short_ttime" (0 or 1).
func WarmQueueKey(pid uint32, name string) string {
	return "pid." + strconv.FormatUint(uint64(pid), 10) + "." + name
}

func parseWarmQueueKey(k string) (uint32, string, bool) {
	rest, ok := strings.CutPrefix(k, "pid.")
	if !ok {
		return 0, "", false
	}
	p, name, ok := strings.Cut(rest, ".")
	pid, err := strconv.ParseUint(p, 10, 32)
	if !ok || err != nil || pid == 0 {
		return 0, "", false
	}
	return uint32(pid), name, true
}

// warmQueue gives q, pid's new sync queue, the state the capture showed
// for pid's queue before the trace began (once: a queue the process
// gets later is new in the kernel too).
func (s *Scheduler) warmQueue(q *queue, pid uint32) {
	w, ok := s.warmQueues[pid]
	if !ok {
		return
	}
	delete(s.warmQueues, pid)
	if w.maxBudget > 0 && s.userMaxBudget == 0 {
		q.maxBudget = min(w.maxBudget, s.bfqMaxBudget())
	}
	if w.hasShort {
		q.shortTtime, q.warmTtime = w.short, true
		if !q.shortTtime {
			q.injectLimit = 1 // bfq_init_bfqq
		} else {
			q.injectLimit = 0
		}
	}
}

// WarmState returns the state a BFQ message of a capture shows the
// scheduler in, for Options.Warm, and whether body (a message's text after
// its queue name) shows any: "recalc_budg: last max_budg %d, min budg %d"
// (__bfq_bfqq_recalc_budget) gives bfq_min_budget, bfq_max_budget/32 once
// bfq_stats_min_budgets budgets were assigned; before, the default's
// (16384/32), which is no news. Callers take the first such message.
func WarmState(body string) (map[string]int64, bool) {
	_, mb, ok := parseRecalcBudg(strings.TrimSpace(body))
	if !ok || mb <= 0 {
		return nil, false
	}
	if mb == defaultMaxBudget/32 {
		return nil, true
	}
	return map[string]int64{"max_budget": mb * 32}, true
}

// parseRecalcBudg parses __bfq_bfqq_recalc_budget's message, "recalc_budg:
// last max_budg B, min budg M" (body trimmed): the queue's max_budget B
// and bfq_min_budget M, in sectors.
func parseRecalcBudg(body string) (maxBudg, minBudg int64, ok bool) {
	rest, ok := strings.CutPrefix(body, "recalc_budg: last max_budg ")
	if !ok {
		return 0, 0, false
	}
	b, m, ok := strings.Cut(rest, ", min budg ")
	if !ok {
		return 0, 0, false
	}
	maxBudg, err1 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
	minBudg, err2 := strconv.ParseInt(strings.TrimSpace(m), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return maxBudg, minBudg, true
}

// warmQueueWindow is how long after a queue's first message in a capture
// its messages still show the state it had before the trace: jbd2's in
// fs-bfq-fsync-vs-seqread come 3 ms after its first (its first journal
// write of the trace, judged on its think time before it), the fsync
// writer's first expire seconds after its first, when the trace's own
// I/O has made its think time; 100 ms, less than a budget timeout
// (bfq_timeout, 124 ms at HZ 250).
const warmQueueWindow = trace.Time(100_000_000)

// WarmFrom returns Options.Warm from a capture's messages, msgs in time
// order (diff.Side.MessageSeq), or nil when they show nothing:
//
//   - max_budget: the first BFQ message that shows the device's budgets
//     (WarmState);
//   - per process whose sync queue existed before the trace began (its
//     first message is not bfq_get_queue's "allocated"), from its messages
//     within warmQueueWindow of its first (later ones show what the
//     trace's own I/O made of the queue), WarmQueueKey
//     "max_budget" from its first "recalc_budg: last max_budg B, min
//     budg M" unless B is 2 x M (a weight-raised queue: the message shows
//     __bfq_bfqq_recalc_budget's 2 * bfq_min_budget, not bfqq->max_budget)
//     or a "raising period" message of it came first, and "short_ttime"
//     from its first "expire (..., short_ttime T)" (__bfq_bfqq_expire's
//     bfq_bfqq_has_short_ttime). Weight raising is not carried: a raised
//     queue's first messages show its coefficient and how long it has
//     been raised, but no more than a new queue's raising gives it.
//
// fs-bfq-fsync-vs-seqread: jbd2 (23778) "expire (4, slow 0, num_disp 0,
// short_ttime 0)", "recalc_budg: last max_budg 8874, min budg 3812".
func WarmFrom(msgs iter.Seq2[trace.Time, trace.Message]) map[string]int64 {
	type pidState struct {
		first                        trace.Time
		fresh, raised, budget, short bool
	}
	var out map[string]int64
	set := func(k string, v int64) {
		if out == nil {
			out = map[string]int64{}
		}
		out[k] = v
	}
	global := false
	pids := map[int32]*pidState{}
	for at, m := range msgs {
		if m.Sched != "bfq" {
			continue
		}
		body := strings.TrimSpace(m.Body)
		if !global {
			if w, ok := WarmState(body); ok {
				global = true
				for k, v := range w {
					set(k, v)
				}
			}
		}
		if m.PID <= 0 || !m.Sync || m.Shared {
			continue
		}
		p := pids[m.PID]
		if p == nil {
			p = &pidState{first: at, fresh: strings.HasPrefix(body, "allocated")}
			pids[m.PID] = p
		}
		if p.fresh || at-p.first > warmQueueWindow {
			continue
		}
		switch {
		case strings.HasPrefix(body, "raising period"):
			p.raised = true
		case !p.budget && strings.HasPrefix(body, "recalc_budg: last max_budg "):
			p.budget = true
			if b, mb, ok := parseRecalcBudg(body); ok && b > 0 && b != 2*mb && !p.raised {
				set(WarmQueueKey(uint32(m.PID), "max_budget"), b)
			}
		case !p.short && strings.HasPrefix(body, "expire ("):
			p.short = true
			if i := strings.Index(body, "short_ttime "); i >= 0 {
				v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(body[i+len("short_ttime "):]), ")"))
				if err == nil && (v == 0 || v == 1) {
					set(WarmQueueKey(uint32(m.PID), "short_ttime"), int64(v))
				}
			}
		}
	}
	return out
}
