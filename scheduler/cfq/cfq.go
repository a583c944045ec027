// Package cfq models the CFQ I/O scheduler of Linux 4.19
// (block/cfq-iosched.c), with the behaviour changes of its last years as
// switches (Features, --kernel presets 4.13 and 4.19).
//
// CFQ ran on the legacy single-queue path: the driver pulled one request at
// a time through cfq_dispatch_requests while it had room. Here every
// Dispatch call is one cfq_dispatch_requests call (one request at most);
// Insert is cfq_insert_request; Completed is cfq_completed_request; the
// idle hrtimer is Host timer 1; kblockd queue runs (cfq_schedule_dispatch,
// and the SCSI run-on-completion) are Host.Kick. The rules are commented
// with the kernel function they mirror. Times are simulated ns, passed in.
package cfq

import (
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// Kernel constants (block/cfq-iosched.c, 4.19).
const (
	cfqIdleDelay      = int64(200 * time.Millisecond) // CFQ_IDLE_DELAY
	cfqSliceScale     = 5                             // CFQ_SLICE_SCALE
	cfqHWQueueMin     = 5                             // CFQ_HW_QUEUE_MIN
	cfqqSeekThr       = 8 * 100                       // CFQQ_SEEK_THR, sectors
	cfqqCloseThr      = 8 * 1024                      // CFQQ_CLOSE_THR, sectors
	cfqqSectThrNonrot = 2 * 32                        // CFQQ_SECT_THR_NONROT, sectors
	cfqServiceShift   = 12                            // CFQ_SERVICE_SHIFT
	cfqHistDivisor    = 4                             // cfq_hist_divisor
	ioprioNorm        = 4                             // IOPRIO_NORM
	pageSize          = 4096                          // PAGE_SIZE, bytes
	weightDefault     = 500                           // CFQ_WEIGHT_LEGACY_DFL
	weightMin         = 10                            // CFQ_WEIGHT_LEGACY_MIN
	weightMax         = 1000                          // CFQ_WEIGHT_LEGACY_MAX
	sliceModeDelay    = int64(time.Second / 5)        // CFQ_SLICE_MODE_GROUP_DELAY, raw vdisktime units
	idleTimer         = 1                             // Host timer id of idle_slice_timer
)

// Workload classes and types, with the kernel's enum values (wl_class_t,
// wl_type_t), as set_active prints them.
const (
	classBE   = 0 // BE_WORKLOAD
	classRT   = 1 // RT_WORKLOAD
	classIdle = 2 // IDLE_WORKLOAD

	wlAsync      = 0 // ASYNC_WORKLOAD
	wlSyncNoidle = 1 // SYNC_NOIDLE_WORKLOAD
	wlSync       = 2 // SYNC_WORKLOAD
)

// ttime is a think-time record (struct cfq_ttime), ns.
type ttime struct {
	lastEnd int64  // last_end_request
	total   uint64 // ttime_total
	samples uint64 // ttime_samples (fixed point, 256 = 1)
	mean    uint64 // ttime_mean
}

// update is __cfq_update_io_thinktime: 7/8 decaying average of the gap
// from the last completion to this insertion, each sample clamped to 2*c.
func (t *ttime) update(now, c int64) {
	el := uint64(now - t.lastEnd)
	if now < t.lastEnd {
		el = 0
	}
	el = min(el, 2*uint64(c))
	t.samples = (7*t.samples + 256) / 8
	t.total = (7*t.total + 256*el) / 8
	t.mean = (t.total + 128) / t.samples
}

// valid is sample_valid: more than 80 (of 256) samples.
func (t *ttime) valid() bool { return t.samples > 80 }

// serviceTree is a cfq_rb_root: queues ordered by rb_key, ties in
// insertion order.
type serviceTree struct {
	qs    []*queue
	tt    ttime
	class int
	typ   int
}

func (st *serviceTree) count() int { return len(st.qs) }

func (st *serviceTree) first() *queue {
	if len(st.qs) == 0 {
		return nil
	}
	return st.qs[0]
}

func (st *serviceTree) insert(q *queue) {
	i := sort.Search(len(st.qs), func(i int) bool { return st.qs[i].rbKey > q.rbKey })
	st.qs = append(st.qs, nil)
	copy(st.qs[i+1:], st.qs[i:])
	st.qs[i] = q
}

func (st *serviceTree) erase(q *queue) {
	for i, x := range st.qs {
		if x == q {
			st.qs = append(st.qs[:i], st.qs[i+1:]...)
			return
		}
	}
}

// group is a cfq_group: one per cgroup.
type group struct {
	id       uint64
	path     string
	parent   *group
	weight   int // weight (against siblings)
	leafW    int // leaf_weight (own tasks against child groups)
	nrActive int
	childW   int    // children_weight
	vfr      uint32 // vfraction, 1/4096 units
	vdisk    uint64 // vdisktime
	onTree   bool
	nrCfqq   int // busy queues of the group
	st       [2][3]serviceTree
	stIdle   serviceTree
	avgQ     [2]int // busy_queues_avg[BE, RT]

	savedWlSlice int64
	savedWlType  int
	savedWlClass int
	dispatched   int
	tt           ttime
	async        [2][8]*queue
	asyncIdle    *queue

	// statistics (blkio.*)
	stats GroupStats
}

// GroupStats are a group's blkio statistics.
type GroupStats struct {
	Time       time.Duration // blkio.time: sum of charged slice usage (ns)
	Sectors    uint64        // blkio.sectors dispatched
	Serviced   uint64        // blkio.io_serviced: requests completed
	Dispatched uint64        // requests dispatched
	Charge     uint64        // sum of charges (ns or requests in IOPS mode)
}

// stFor is st_for: the tree of class and type.
func (g *group) stFor(class, typ int) *serviceTree {
	if class == classIdle {
		return &g.stIdle
	}
	return &g.st[class][typ]
}

// busyWl is cfq_group_busy_queues_wl: busy queues of a class.
func (g *group) busyWl(class int) int {
	if class == classIdle {
		return g.stIdle.count()
	}
	return g.st[class][wlAsync].count() + g.st[class][wlSyncNoidle].count() + g.st[class][wlSync].count()
}

// busyAsync is cfqg_busy_async_queues.
func (g *group) busyAsync() int {
	return g.st[classRT][wlAsync].count() + g.st[classBE][wlAsync].count()
}

// isDescendant is cfqg_is_descendant: g is ancestor or equal to d's ancestors.
func isDescendant(g, anc *group) bool {
	for x := g; x != nil; x = x.parent {
		if x == anc {
			return true
		}
	}
	return false
}

// cic is a cfq_io_cq: one per process.
type cic struct {
	pid    uint32
	g      *group
	q      [2]*queue // cfqq[async, sync]
	tt     ttime
	exited bool
	class  int
	prio   int
}

// queue is a cfq_queue.
type queue struct {
	pid    uint32
	serial uint64 // stands for the queue's address in log lines
	sync   bool
	class  int
	prio   int // ioprio
	org    int // org_ioprio
	g      *group
	st     *serviceTree
	rbKey  int64
	repos  int64 // reposition_time (FeatureRepositionTime)
	onRR   bool

	sortList []*replay.Request // by sector
	fifo     []*replay.Request
	nextRQ   *replay.Request
	queued   [2]int
	dispatched,
	prioPending int
	procs int // process references (cfqq_process_refs)

	dispatchStart, sliceStart, sliceEnd, allocatedSlice int64
	sliceDispatch                                       int
	sliceResid                                          int64
	nrSectors                                           uint64
	seekHistory                                         uint32
	lastRequestPos                                      uint64
	newQ                                                *queue
	pTree                                               *prioTree
	dispMsg                                             [2]string // cached "dispatched a request" lines, by N flag
	lastLog                                             string    // the line emit sent for the queue last (Scheduler.lastLog)

	// flags (CFQ_CFQQ_FLAG_*)
	waitRequest, mustDispatch, fifoExpire, idleWindow, sliceNew, coop, splitCoop, deep, waitBusy bool
}

// seeky is CFQQ_SEEKY: more than 4 of the last 32 requests seeky.
func (q *queue) seeky() bool { return popcount(q.seekHistory) > 32/8 }

func popcount(x uint32) int { return bits.OnesCount32(x) }

func (q *queue) empty() bool { return len(q.sortList) == 0 }

// typ is cfqq_type.
func (q *queue) typ() int {
	if !q.sync {
		return wlAsync
	}
	if !q.idleWindow {
		return wlSyncNoidle
	}
	return wlSync
}

// rqData is the per-request state (rq->elv.priv).
type rqData struct {
	q        *queue
	c        *cic
	g        *group
	fifoTime int64
	start    int64 // rq->start_time_ns
	sync     bool
	prio     bool // REQ_PRIO (approximated by REQ_META)
}

func rqd(rq *replay.Request) *rqData { return rq.Sched.(*rqData) }

// prioTree is one of prio_trees: busy queues keyed by next_rq's sector.
type prioTree struct{ qs []*queue }

func (p *prioTree) search(sector uint64) int {
	return sort.Search(len(p.qs), func(i int) bool { return p.qs[i].nextRQ.Sector >= sector })
}

// Scheduler is a CFQ instance for one request queue (struct cfq_data).
type Scheduler struct {
	h      replay.Host
	t      tunables
	jiffy  int64 // ns per jiffy
	nonrot bool

	armOnGroupIdle bool // FeatureGroupIdleArm
	reposition     bool // FeatureRepositionTime
	logRequests    bool // FeatureLogRequests (and logOn)
	logOn          bool // the host records log lines (see LogEnabler)

	root    *group
	groups  map[uint64]*group
	byPath  map[string]*group
	weights map[uint64]int
	paths   map[uint64]string
	pathW   map[string]int
	pathLW  map[string]int
	prios   map[uint32][2]int
	procs   map[uint32]*cic

	// grp_service_tree
	gst    []*group
	minVdt uint64

	servingGroup    *group
	servingClass    int
	servingType     int
	workloadExpires int64

	active    *queue
	activeCIC *cic
	prioTrees [8]prioTree

	busyQueues, busySyncQueues int
	rqInDriver                 int
	rqInFlight                 [2]int
	rqQueued                   int
	hwTag                      int
	hwTagEstDepth              int
	hwTagSamples               int
	lastPosition               uint64
	lastDelayedSync            int64
	timerPending               bool
	timerAt                    int64

	serial uint64    // queues created
	buf    []byte    // log line being built
	freeRQ []*rqData // recycled per-request state
	// lastLog is the line emit sent last for no queue (a queue's is
	// queue.lastLog): a line equal to it is sent as that string, not a
	// new one (most lines repeat: "arm_idle: 8000000 group_idle: 0").
	lastLog string
}

// New returns a CFQ model for the queue h describes, with the options o.
// Unknown attributes, features or kernels are errors.
func New(h replay.Host, o replay.Options) (*Scheduler, error) {
	s := &Scheduler{
		h: h, t: defaultTunables(),
		groups: map[uint64]*group{}, byPath: map[string]*group{},
		weights: o.Weights, paths: o.CgroupPaths,
		pathW: map[string]int{}, pathLW: map[string]int{}, prios: map[uint32][2]int{},
		procs: map[uint32]*cic{}, hwTag: -1,
	}
	hz := o.HZ
	if hz <= 0 {
		hz = 250
	}
	s.jiffy = int64(time.Second) / int64(hz)
	kernel := o.Kernel
	if kernel == "" {
		kernel = Kernel419
	}
	if kernel != Kernel413 && kernel != Kernel419 {
		return nil, fmt.Errorf("cfq: unknown kernel %q (have %s, %s)", o.Kernel, Kernel413, Kernel419)
	}
	feat := map[string]bool{}
	for _, f := range Features() {
		feat[f.Name] = f.Kernels[kernel]
	}
	for k, v := range o.Features {
		if _, ok := feat[k]; !ok {
			return nil, fmt.Errorf("cfq: unknown feature %q", k)
		}
		feat[k] = v
	}
	s.armOnGroupIdle = feat[FeatureGroupIdleArm]
	s.reposition = feat[FeatureRepositionTime]
	s.logOn = true
	if le, ok := h.(LogEnabler); ok {
		s.logOn = le.LogEnabled()
	}
	s.logRequests = feat[FeatureLogRequests] && s.logOn

	for _, k := range sortedSetKeys(o.Set) {
		v := o.Set[k]
		switch {
		case strings.HasPrefix(k, "blkio.weight:"), strings.HasPrefix(k, "blkio.leaf_weight:"):
			name, p, _ := strings.Cut(k, ":")
			n, err := strconv.Atoi(v)
			if err != nil || n < weightMin || n > weightMax {
				return nil, fmt.Errorf("cfq: %s: bad weight %q", k, v)
			}
			p = cleanPath(p)
			if name == "blkio.weight" {
				s.pathW[p] = n
			} else {
				s.pathLW[p] = n
			}
		case strings.HasPrefix(k, "ioprio:"):
			pid, err := strconv.ParseUint(k[len("ioprio:"):], 10, 32)
			if err != nil {
				return nil, fmt.Errorf("cfq: %s: bad pid", k)
			}
			c, l, err := parseIoprio(v)
			if err != nil {
				return nil, fmt.Errorf("cfq: %s: %v", k, err)
			}
			s.prios[uint32(pid)] = [2]int{c, l}
		default:
			if err := s.t.set(k, v); err != nil {
				return nil, err
			}
		}
	}
	q := h.Queue()
	s.nonrot = !q.Rotational
	// cfq_registered_queue: "IOPS mode with no idling for SSDs".
	if s.nonrot && !s.t.sliceIdleSetter {
		s.t.sliceIdle = 0
	}
	for id, w := range o.Weights {
		if w != 0 && (w < weightMin || w > weightMax) {
			return nil, fmt.Errorf("cfq: cgroup %d: weight %d out of range %d..%d", id, w, weightMin, weightMax)
		}
	}
	// The root group: blkcg_root's weight and leaf_weight are twice the default.
	s.root = s.newGroup(0, 0, "/", nil)
	s.root.weight, s.root.leafW = 2*weightDefault, 2*weightDefault
	if w, ok := s.pathLW["/"]; ok {
		s.root.leafW = w
	} else if w := o.Weights[0]; w != 0 {
		s.root.leafW = w
	} else if w, ok := s.pathW["/"]; ok {
		s.root.leafW = w
	}
	s.byPath["/"] = s.root
	s.groups[0] = s.root
	s.lastDelayedSync = -int64(time.Second) // now - NSEC_PER_SEC at init
	return s, nil
}

func cleanPath(p string) string {
	p = "/" + strings.Trim(p, "/")
	return p
}

// Name returns "cfq".
func (s *Scheduler) Name() string { return "cfq" }

// CgroupMergeable is false: Linux 4.13 and 4.19 merge without
// blk_cgroup_mergeable (replay.CgroupMergeRule); cfq_allow_bio_merge and
// cfq_allow_rq_merge keep merges within one cfq queue, and so within one
// cgroup, but a REQ_META bio joins a data request of its queue.
func (s *Scheduler) CgroupMergeable() bool { return false }

// DisablesWBT reports that CFQ runs without writeback throttling
// (cfq_init_queue calls wbt_disable_default, Linux 4.12 to 4.20):
// replay.WritebackThrottleDisabler.
func (s *Scheduler) DisablesWBT() bool { return true }

// newGroup is cfq_pd_alloc with cfq_init_cfqg_base: the group's and its
// service trees' think-time clocks (last_end_request) start at its
// creation, now, so the first sample is the gap from then, not from 0.
func (s *Scheduler) newGroup(now int64, id uint64, path string, parent *group) *group {
	g := &group{id: id, path: path, parent: parent, weight: weightDefault, leafW: weightDefault}
	for c := 0; c < 2; c++ {
		for t := 0; t < 3; t++ {
			g.st[c][t].class, g.st[c][t].typ = c, t
			g.st[c][t].tt.lastEnd = now // CFQ_RB_ROOT
		}
	}
	g.stIdle.class = classIdle
	g.stIdle.tt.lastEnd = now
	g.tt.lastEnd = now
	return g
}

// groupFor returns the group of cgroup id, creating it and its ancestors
// (cfq_lookup_cfqg, blkg creation) at now.
func (s *Scheduler) groupFor(now int64, id uint64) *group {
	if g, ok := s.groups[id]; ok {
		return g
	}
	path := s.paths[id]
	if path == "" {
		path = "/#" + strconv.FormatUint(id, 10)
	}
	path = cleanPath(path)
	g := s.groupByPath(now, path)
	if g.id == 0 && g != s.root {
		g.id = id
	}
	if w := s.weights[id]; w != 0 && g != s.root {
		g.weight = w
	}
	s.groups[id] = g
	return g
}

func (s *Scheduler) groupByPath(now int64, path string) *group {
	if g, ok := s.byPath[path]; ok {
		return g
	}
	i := strings.LastIndexByte(path, '/')
	pp := path[:i]
	if pp == "" {
		pp = "/"
	}
	parent := s.groupByPath(now, pp)
	g := s.newGroup(now, 0, path, parent)
	if w, ok := s.pathW[path]; ok {
		g.weight = w
	}
	if w, ok := s.pathLW[path]; ok {
		g.leafW = w
	}
	s.byPath[path] = g
	return g
}

// GroupStats returns the blkio statistics of cgroup id (zero if unseen).
func (s *Scheduler) GroupStats(id uint64) GroupStats {
	if g, ok := s.groups[id]; ok {
		return g.stats
	}
	return GroupStats{}
}

// PathStats returns the blkio statistics of the group at path.
func (s *Scheduler) PathStats(path string) GroupStats {
	if g, ok := s.byPath[cleanPath(path)]; ok {
		return g.stats
	}
	return GroupStats{}
}

// HWTag returns cfqd->hw_tag: -1 undecided, 0 no queueing, 1 NCQ.
func (s *Scheduler) HWTag() int { return s.hwTag }

// SliceIdle returns the effective slice_idle (0 on non-rotational queues by default).
func (s *Scheduler) SliceIdle() time.Duration { return time.Duration(s.t.sliceIdle) }

// ---- logging (cfq_log, cfq_log_cfqq) ----

// LogEnabler is an optional interface of a replay.Host: a host whose
// LogEnabled returns false (asked once, in New) records no log lines, and
// the model then builds none. Formatting the decision lines is most of the
// model's cost on big replays (a string per line handed to Host.Log), so a
// host without a message sink should implement it. Hosts that do not
// implement it get every line.
type LogEnabler interface {
	LogEnabled() bool
}

// logq starts a cfq_log_cfqq line: "cfq<pid><S|A><N| > ".
func (s *Scheduler) logq(q *queue) []byte {
	b := append(s.buf[:0], "cfq"...)
	b = strconv.AppendUint(b, uint64(q.pid), 10)
	if q.sync {
		b = append(b, 'S')
	} else {
		b = append(b, 'A')
	}
	if q.typ() == wlSyncNoidle { // cfqq_type(cfqq) == SYNC_NOIDLE_WORKLOAD
		b = append(b, 'N', ' ')
	} else {
		b = append(b, ' ', ' ')
	}
	return b
}

func (s *Scheduler) emit(now int64, q *queue, b []byte) {
	s.buf = b
	if !s.logOn {
		return
	}
	var pid uint32
	var cg uint64
	last := &s.lastLog
	if q != nil {
		pid, cg = q.pid, q.g.id
		last = &q.lastLog
	}
	if string(b) != *last {
		*last = string(b)
	}
	s.h.Log(trace.Time(now), pid, cg, *last)
}

// logf formats with fmt; callers on hot paths guard it with s.logOn so
// that the arguments are not boxed when nobody reads the line.
func (s *Scheduler) logf(now int64, q *queue, format string, args ...any) {
	if !s.logOn {
		return
	}
	var b []byte
	if q == nil {
		b = append(s.buf[:0], "cfq "...)
	} else {
		b = s.logq(q)
	}
	s.emit(now, q, fmt.Appendf(b, format, args...))
}

// kv is one piece of a log line: a literal and, unless noVal, a number.
type kv struct {
	k string
	v int64
}

const noVal = -1 << 63

// logv formats a line from pieces without fmt (the hot decision lines).
func (s *Scheduler) logv(now int64, q *queue, kvs ...kv) {
	if !s.logOn {
		return
	}
	var b []byte
	if q == nil {
		b = append(s.buf[:0], "cfq "...)
	} else {
		b = s.logq(q)
	}
	for _, x := range kvs {
		b = append(b, x.k...)
		if x.v != noVal {
			b = strconv.AppendInt(b, x.v, 10)
		}
	}
	s.emit(now, q, b)
}

// logDispatched logs "dispatched a request", with the line cached per queue.
func (s *Scheduler) logDispatched(now int64, q *queue) {
	if !s.logOn {
		return
	}
	n := b2i(q.typ() == wlSyncNoidle)
	if q.dispMsg[n] == "" {
		q.dispMsg[n] = string(append(s.logq(q), "dispatched a request"...))
	}
	s.h.Log(trace.Time(now), q.pid, q.g.id, q.dispMsg[n])
}

func (s *Scheduler) logs(now int64, q *queue, text string) {
	if !s.logOn {
		return
	}
	s.emit(now, q, append(s.prefix(q), text...))
}

// prefix starts a line: cfq_log_cfqq's for a queue, cfq_log's for nil.
func (s *Scheduler) prefix(q *queue) []byte {
	if q == nil {
		return append(s.buf[:0], "cfq "...)
	}
	return s.logq(q)
}
