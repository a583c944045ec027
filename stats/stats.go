package stats

import (
	"math"
	"math/bits"
	"slices"

	"github.com/tracesched/tracesched/trace"
)

// Summary is the btt-grade summary of a capture that `tracesched stats
// --json` prints (docs/cli.md "stats"). Its JSON keys are the contract:
// events.total, events.by_action, requests.{total,reads,writes,bytes_read,
// bytes_written}, latency.{Q2C,D2C,Q2D,I2D,Q2G,G2I} each {n,min,avg,max,
// p50,p99} in seconds, merges.{back,front}, cgroups[], processes[],
// dropped_events, missing_cpu_files; plus seeks, devices, span and rebuild.
//
// Definitions (SummaryOptions.BTT switches to btt's):
//
//   - Q2C and Q2D are per bio: from the bio's Q to its request's (last) C,
//     or D. A split bio counts once, to the last completion of its parts.
//   - D2C, I2D, Q2G and G2I are per request (merged-away requests excluded;
//     requests in flight at start included where both times were seen), so
//     a D/C-only capture still has D2C.
//   - Requests are counted when emitted, merged-away ones excluded; bytes
//     are those of completed requests (Request.Bytes at issue), by direction
//     (Category.IsWrite: writes, discards).
//   - Bandwidth (mib_per_s) is completed bytes / 2^20 / Span.Seconds, the
//     span from the first to the last I/O event of the capture.
//   - Arrays are sorted by id, pid or device.
type Summary struct {
	Events    SummaryEvents      `json:"events"`
	Requests  SummaryRequests    `json:"requests"`
	Latency   SummaryLatency     `json:"latency"`
	Merges    SummaryMerges      `json:"merges"`
	Seeks     SummarySeeks       `json:"seeks"`
	Devices   []SummaryDevice    `json:"devices"`
	Cgroups   []SummaryCgroup    `json:"cgroups"`
	Processes []SummaryProcess   `json:"processes"`
	Span      SummarySpan        `json:"span"`
	Rebuild   trace.RebuildStats `json:"rebuild"`

	// Set by the caller from the reader's diagnostics.
	DroppedEvents   uint64 `json:"dropped_events"`    // events missing from sequence numbers
	MissingCPUFiles []int  `json:"missing_cpu_files"` // CPU indexes absent from a per-CPU set; never null

	// BFQMaxBudget, set by the caller from BFQ's messages, is the
	// auto-tuned bfq_max_budget (sectors) that BFQ had when the trace
	// began, as its first message that shows one says; 0 when none does
	// (no BFQ messages, or a BFQ that had not tuned it yet).
	BFQMaxBudget int64 `json:"bfq_max_budget,omitempty"`
}

// SummaryEvents counts events. ByAction always holds the letters Q G I D C
// M F P U A X R S B T m (zero when unseen), plus the key of any other action
// seen (process, timestamp, ZP, ZU, drv_data...). Total counts every event,
// notify records included.
type SummaryEvents struct {
	Total    uint64            `json:"total"`
	ByAction map[string]uint64 `json:"by_action"`
}

// SummaryRequests counts rebuilt requests (merged-away ones excluded).
type SummaryRequests struct {
	Total        uint64 `json:"total"`
	Reads        uint64 `json:"reads"`
	Writes       uint64 `json:"writes"`
	BytesRead    uint64 `json:"bytes_read"`    // completed read requests
	BytesWritten uint64 `json:"bytes_written"` // completed write requests
	NoQueue      uint64 `json:"no_queue"`      // requests with no bio queued: the three kinds below, and passthrough
	Incomplete   uint64 `json:"incomplete"`    // never completed in the capture

	// Of NoQueue, the flushes the kernel's flush machinery made (zero
	// bytes, F: blk_kick_flush's flush_rq, "FN" in blkparse).
	KernelFlushes uint64 `json:"no_queue_kernel_flushes"`
	// Of NoQueue, the zero-byte completions (C with no D, not a flush)
	// that end a flush sequence: blk_flush_complete_seq ends a
	// PREFLUSH/FUA write with a C of no bytes after its post-flush, once
	// the data step's C has completed the request.
	FlushSequenceEnds uint64 `json:"no_queue_flush_sequence_ends"`
	// Of NoQueue, the requests issued or completed with no Q seen:
	// queued before the capture started.
	InFlightAtStart uint64 `json:"no_queue_in_flight_at_start"`
}

// SummaryLatency holds the latency rows, in seconds.
type SummaryLatency struct {
	Q2C LatencyStats `json:"Q2C"`
	D2C LatencyStats `json:"D2C"`
	Q2D LatencyStats `json:"Q2D"`
	I2D LatencyStats `json:"I2D"`
	Q2G LatencyStats `json:"Q2G"`
	G2I LatencyStats `json:"G2I"`
}

// LatencyStats summarises one latency, in seconds. N, Min, Avg and Max are
// exact (to the nanosecond); P50 and P99 come from a log-linear histogram
// (values under 256 ns exact, above with relative error under 0.2%; nearest
// rank, clamped to [Min, Max]). All zero when N is 0.
type LatencyStats struct {
	N   uint64  `json:"n"`
	Min float64 `json:"min"`
	Avg float64 `json:"avg"`
	Max float64 `json:"max"`
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// SummaryMerges counts merges.
type SummaryMerges struct {
	Back    uint64 `json:"back"`    // bio back merges (M)
	Front   uint64 `json:"front"`   // bio front merges (F)
	Request uint64 `json:"request"` // requests merged into another (request-level M)
}

// SummarySeeks holds btt's seek statistics: Q2Q over bios in queue order,
// D2D over requests in issue order, per device then pooled (the pooled row
// sums the devices' seeks as btt's "Overall" does).
type SummarySeeks struct {
	Q2Q SeekStats `json:"Q2Q"`
	D2D SeekStats `json:"D2D"`
}

// SeekStats is btt's seek row. A seek distance (sectors) is 0 when the I/O
// overlaps the previous one's [start, end], else start − previous end when
// after it, else start − previous start; the first I/O of a device seeks
// from sector 0. Mean is the mean of |distance| (exact); Median is of the
// signed distances (exact up to 256, else within 0.2%); Modes are the most
// frequent distances, ascending, with their Count. Modes are exact while a
// row has at most sumModeCap distinct distances; past that only the first
// sumModeCap distinct distances are counted (a distance first seen later
// is never a mode), which keeps memory bounded.
type SeekStats struct {
	NSeeks uint64  `json:"nseeks"`
	Mean   float64 `json:"mean"`
	Median int64   `json:"median"`
	Modes  []int64 `json:"modes"`
	Count  uint64  `json:"mode_count"`
}

// SummaryDevice is the breakdown for one device.
type SummaryDevice struct {
	Dev      string          `json:"dev"` // "major,minor"
	Requests SummaryRequests `json:"requests"`
	Latency  SummaryLatency  `json:"latency"`
	Merges   SummaryMerges   `json:"merges"`
	Seeks    SummarySeeks    `json:"seeks"`
	MiBPerS  float64         `json:"mib_per_s"`
}

// SummaryCgroup is the breakdown for one cgroup (requests of its first bio's
// cgroup; id 0, unknown, is not listed).
type SummaryCgroup struct {
	ID       uint64  `json:"id"`
	Path     string  `json:"path"`
	Requests uint64  `json:"requests"`
	Bytes    uint64  `json:"bytes"` // completed
	MiBPerS  float64 `json:"mib_per_s"`
}

// SummaryProcess is the breakdown for one process (requests of its first
// bio; pid 0 holds the requests with no bio).
type SummaryProcess struct {
	PID      uint32  `json:"pid"`
	Comm     string  `json:"comm"`
	Requests uint64  `json:"requests"`
	Bytes    uint64  `json:"bytes"` // completed
	MiBPerS  float64 `json:"mib_per_s"`
}

// SummarySpan is the capture's time span: first and last I/O event, in
// seconds since the capture's origin.
type SummarySpan struct {
	Start   float64 `json:"start"`
	End     float64 `json:"end"`
	Seconds float64 `json:"seconds"`
}

// SummaryOptions configures a Summarizer.
type SummaryOptions struct {
	// Cgroups names cgroup ids (Meta.Cgroups); paths carried by events
	// (Event.CgroupPath) are used too.
	Cgroups map[uint64]string
	// BTT makes the latency rows follow btt's accounting, to compare with
	// its reports: every row is per bio (D2C, I2D, Q2G and G2I of a request
	// count once per bio it served; I2D, Q2G and G2I only for the bio that
	// started it, as btt matches G and I to the Q at the same sector);
	// requests in flight at start (FlagNoQueue) are left out, as btt's
	// pre-culling and containment matching leave them out; a delta of 0 or
	// less counts as 1 ns; requests serving part of a split bio (FlagSplit)
	// are left out of D2C, I2D, Q2G and G2I. Known differences that remain:
	// btt gives a split bio Q2G and G2I for its first part and no Q2C,
	// where this mode gives it Q2C and Q2D to its last part's completion;
	// btt matches C by containment, so a partial completion accounts the
	// bios it covers at once. Other rows are unaffected.
	BTT bool
}

// Summarizer builds a Summary from an event stream, running its own
// Rebuilder. Memory is bounded by the I/O in flight plus per-device,
// per-process and per-cgroup tallies of fixed size.
type Summarizer struct {
	opts   SummaryOptions
	rb     *trace.Rebuilder
	closed bool

	events  [256]uint64 // by Action (events.by_action at Summary)
	total   uint64
	first   trace.Time
	last    trace.Time
	all     sumAgg
	devs    map[trace.Dev]*sumAgg
	procs   map[uint32]*SummaryProcess
	cgroups map[uint64]*SummaryCgroup
	cgPaths map[uint64]string
	comms   map[uint32]string
	// lastPID, lastComm: the name stored last in comms, which most events
	// repeat (not stored again).
	lastPID  uint32
	lastComm string
	dropped  uint64
	missing  []int
	finished bool
}

// sumAgg accumulates the rows of one device (or all devices).
type sumAgg struct {
	req                          SummaryRequests
	q2c, d2c, q2d, i2d, q2g, g2i sumLat
	merges                       SummaryMerges
	q2q, d2d                     sumSeek
}

// NewSummarizer returns an empty Summarizer.
func NewSummarizer(opts SummaryOptions) *Summarizer {
	s := &Summarizer{
		opts:    opts,
		first:   trace.NoTime,
		last:    trace.NoTime,
		devs:    make(map[trace.Dev]*sumAgg),
		procs:   make(map[uint32]*SummaryProcess),
		cgroups: make(map[uint64]*SummaryCgroup),
		cgPaths: make(map[uint64]string),
		comms:   make(map[uint32]string),
	}
	s.rb = trace.NewRebuilder(s.request, s.bio)
	return s
}

// sumLetters are the action keys always present in events.by_action.
var sumLetters = [...]string{"Q", "G", "I", "D", "C", "M", "F", "P", "U", "A", "X", "R", "S", "B", "T", "m"}

// Add feeds the next event (in reader order).
func (s *Summarizer) Add(e *trace.Event) {
	s.total++
	s.events[e.Action]++
	if e.CgroupPath != "" && e.Cgroup != 0 {
		s.cgPaths[e.Cgroup] = e.CgroupPath
	}
	if e.Comm != "" {
		s.setComm(e.PID, e.Comm)
	} else if e.Action == trace.ActionProcess && e.Text != "" {
		s.setComm(e.PID, e.Text)
	}
	if !e.Action.IsNotify() {
		if s.first == trace.NoTime || e.Time < s.first {
			s.first = e.Time
		}
		if s.last == trace.NoTime || e.Time > s.last {
			s.last = e.Time
		}
		if e.Action == trace.ActionQueue {
			// Q2Q seeks follow the order bios arrive in.
			s.dev(e.Dev).q2q.add(e.Sector, e.End())
			s.all.q2q.addDist(s.devs[e.Dev].q2q.lastDist)
		}
	}
	s.rb.Add(e)
}

// setComm records comm as the name of pid.
func (s *Summarizer) setComm(pid uint32, comm string) {
	if pid == s.lastPID && comm == s.lastComm && comm != "" {
		return // comms[pid] holds it already
	}
	s.comms[pid] = comm
	s.lastPID, s.lastComm = pid, comm
}

// SetDiagnostics records the reader's findings: events dropped (sequence
// gaps) and CPU files missing from a per-CPU set.
func (s *Summarizer) SetDiagnostics(dropped uint64, missingCPUFiles []int) {
	s.dropped, s.missing = dropped, slices.Clone(missingCPUFiles)
}

func (s *Summarizer) dev(d trace.Dev) *sumAgg {
	a := s.devs[d]
	if a == nil {
		a = &sumAgg{}
		s.devs[d] = a
	}
	return a
}

// request accounts a finished request.
func (s *Summarizer) request(r *trace.Request) {
	a := s.dev(r.Dev)
	if r.Flags&trace.FlagMergedAway != 0 {
		a.merges.Request++
		s.all.merges.Request++
		return
	}
	completed := r.Complete != trace.NoTime && r.Flags&trace.FlagIncomplete == 0
	for _, g := range []*sumAgg{a, &s.all} {
		g.req.Total++
		var bytesDone uint64
		if completed {
			bytesDone = uint64(r.Bytes)
		}
		if r.Cat.IsWrite() {
			g.req.Writes++
			g.req.BytesWritten += bytesDone
		} else {
			g.req.Reads++
			g.req.BytesRead += bytesDone
		}
		if r.Flags&trace.FlagNoQueue != 0 {
			g.req.NoQueue++
			switch {
			case r.Cat&trace.CatPC != 0:
			case r.Bytes == 0 && r.Cat&trace.CatFlush != 0:
				g.req.KernelFlushes++
			case r.Bytes == 0 && r.Issue == trace.NoTime:
				g.req.FlushSequenceEnds++
			default:
				g.req.InFlightAtStart++
			}
		}
		if r.Flags&trace.FlagIncomplete != 0 {
			g.req.Incomplete++
		}
		g.merges.Back += uint64(r.BackMerges)
		g.merges.Front += uint64(r.FrontMerges)
		if r.Issue != trace.NoTime {
			// D2D seeks in emission order: requests are emitted when they
			// complete, so this is completion order, not issue order.
			// BUG: btt uses issue order; the two differ when the device
			// reorders.
			g.d2d.add(r.Sector, r.Sector+uint64(r.Bytes>>9))
		}
	}
	// Per-request latency rows (native mode).
	if !s.opts.BTT {
		s.lat(a, func(g *sumAgg) *sumLat { return &g.d2c }, r.Issue, r.Complete)
		s.lat(a, func(g *sumAgg) *sumLat { return &g.i2d }, r.Insert, r.Issue)
		s.lat(a, func(g *sumAgg) *sumLat { return &g.q2g }, r.Queue, r.Get)
		s.lat(a, func(g *sumAgg) *sumLat { return &g.g2i }, r.Get, r.Insert)
	} else if r.Flags&trace.FlagNoQueue == 0 && r.Bios > 0 {
		// btt: G and I match the Q at the request's start sector only: the
		// bio that started it.
		// btt cannot match the parts of a split bio: leave them out.
		if r.Flags&trace.FlagSplit == 0 {
			s.lat(a, func(g *sumAgg) *sumLat { return &g.q2g }, r.Queue, r.Get)
			s.lat(a, func(g *sumAgg) *sumLat { return &g.g2i }, r.Get, r.Insert)
			s.lat(a, func(g *sumAgg) *sumLat { return &g.i2d }, r.Insert, r.Issue)
			// D2C is per bio: account it once per bio served.
			for range r.Bios {
				s.lat(a, func(g *sumAgg) *sumLat { return &g.d2c }, r.Issue, r.Complete)
			}
		}
	}
	// Processes and cgroups.
	var done uint64
	if completed {
		done = uint64(r.Bytes)
	}
	p := s.procs[r.PID]
	if p == nil {
		p = &SummaryProcess{PID: r.PID}
		s.procs[r.PID] = p
	}
	p.Requests++
	p.Bytes += done
	if p.Comm == "" {
		p.Comm = r.Comm
	}
	if r.Cgroup != 0 {
		c := s.cgroups[r.Cgroup]
		if c == nil {
			c = &SummaryCgroup{ID: r.Cgroup}
			s.cgroups[r.Cgroup] = c
		}
		c.Requests++
		c.Bytes += done
	}
}

// bio accounts a finished bio: Q2C and Q2D.
func (s *Summarizer) bio(b *trace.Bio) {
	if b.Request == 0 {
		return
	}
	a := s.dev(b.Dev)
	s.lat(a, func(g *sumAgg) *sumLat { return &g.q2c }, b.Queue, b.Done)
	s.lat(a, func(g *sumAgg) *sumLat { return &g.q2d }, b.Queue, b.Issue)
}

// lat adds to-from to a row of the device and of all devices.
func (s *Summarizer) lat(a *sumAgg, row func(*sumAgg) *sumLat, from, to trace.Time) {
	d, ok := trace.Latency(from, to)
	if !ok {
		return
	}
	if s.opts.BTT && d <= 0 {
		d = 1
	}
	if d < 0 {
		d = 0
	}
	row(a).add(d)
	row(&s.all).add(d)
}

// Result closes the stream (the first call) and returns the summary.
func (s *Summarizer) Result() Summary {
	if !s.finished {
		s.rb.Close()
		s.finished = true
	}
	out := Summary{
		Events:          SummaryEvents{Total: s.total, ByAction: make(map[string]uint64)},
		Requests:        s.all.req,
		Latency:         s.all.latency(),
		Merges:          s.all.merges,
		Seeks:           SummarySeeks{Q2Q: s.all.q2q.result(), D2D: s.all.d2d.result()},
		Rebuild:         s.rb.Stats(),
		DroppedEvents:   s.dropped,
		MissingCPUFiles: slices.Clone(s.missing),
		Devices:         []SummaryDevice{},
		Cgroups:         []SummaryCgroup{},
		Processes:       []SummaryProcess{},
	}
	if out.MissingCPUFiles == nil {
		out.MissingCPUFiles = []int{}
	}
	for _, l := range sumLetters {
		out.Events.ByAction[l] = 0
	}
	for a, v := range s.events {
		if v != 0 {
			out.Events.ByAction[trace.Action(a).Letter()] = v
		}
	}
	if s.first != trace.NoTime {
		out.Span = SummarySpan{Start: s.first.Seconds(), End: s.last.Seconds(), Seconds: (s.last - s.first).Seconds()}
	}
	mibps := func(b uint64) float64 {
		if out.Span.Seconds <= 0 {
			return 0
		}
		return float64(b) / (1 << 20) / out.Span.Seconds
	}
	devs := make([]trace.Dev, 0, len(s.devs))
	for d := range s.devs {
		devs = append(devs, d)
	}
	slices.Sort(devs)
	for _, d := range devs {
		a := s.devs[d]
		out.Devices = append(out.Devices, SummaryDevice{
			Dev: d.String(), Requests: a.req, Latency: a.latency(), Merges: a.merges,
			Seeks:   SummarySeeks{Q2Q: a.q2q.result(), D2D: a.d2d.result()},
			MiBPerS: mibps(a.req.BytesRead + a.req.BytesWritten),
		})
	}
	pids := make([]uint32, 0, len(s.procs))
	for p := range s.procs {
		pids = append(pids, p)
	}
	slices.Sort(pids)
	for _, pid := range pids {
		p := *s.procs[pid]
		if p.Comm == "" {
			p.Comm = s.comms[pid]
		}
		p.MiBPerS = mibps(p.Bytes)
		out.Processes = append(out.Processes, p)
	}
	ids := make([]uint64, 0, len(s.cgroups))
	for id := range s.cgroups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		c := *s.cgroups[id]
		if p, ok := s.opts.Cgroups[id]; ok {
			c.Path = p
		} else {
			c.Path = s.cgPaths[id]
		}
		c.MiBPerS = mibps(c.Bytes)
		out.Cgroups = append(out.Cgroups, c)
	}
	return out
}

func (a *sumAgg) latency() SummaryLatency {
	return SummaryLatency{
		Q2C: a.q2c.result(), D2C: a.d2c.result(), Q2D: a.q2d.result(),
		I2D: a.i2d.result(), Q2G: a.q2g.result(), G2I: a.g2i.result(),
	}
}

// sumLat accumulates one latency row: exact n, min, max and sum, and a
// log-linear histogram for percentiles.
type sumLat struct {
	n, sum   uint64
	min, max int64
	hist     sumHist
}

func (l *sumLat) add(d int64) {
	if l.n == 0 || d < l.min {
		l.min = d
	}
	if l.n == 0 || d > l.max {
		l.max = d
	}
	l.n++
	l.sum += uint64(d)
	l.hist.add(d)
}

func (l *sumLat) result() LatencyStats {
	if l.n == 0 {
		return LatencyStats{}
	}
	q := func(p float64) float64 {
		v := l.hist.quantile(p)
		return float64(min(max(v, l.min), l.max)) / 1e9
	}
	return LatencyStats{
		N: l.n, Min: float64(l.min) / 1e9, Max: float64(l.max) / 1e9,
		Avg: float64(l.sum) / float64(l.n) / 1e9,
		P50: q(0.50), P99: q(0.99),
	}
}

// sumHist is a log-linear histogram of signed values: values with
// |v| < 2^sumSubBits are exact; larger ones fall in one of 2^sumSubBits
// buckets per power of two, so the bucket midpoint is within 2^-(sumSubBits+1)
// (0.2%) of any value in it. At most 2 * 64 * 2^sumSubBits buckets exist, so
// memory is bounded whatever the number of values.
//
// The counts are kept by magnitude (sumBucket of |v|, for each sign) in
// groups of 2^sumSubBits buckets, one group per power of two, each
// allocated when a value first falls in it (2 KiB; at most 2 * 57
// groups): an add is two indexings, not a map assignment (a third of
// `stats`'s time when it was one).
type sumHist struct {
	pos, neg [][]uint64 // by group (magnitude bucket >> sumSubBits); nil: no value in it
	n        uint64
}

const sumSubBits = 8

func sumBucket(v int64) int32 {
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
	}
	var b int32
	if u < 1<<sumSubBits {
		b = int32(u)
	} else {
		e := bits.Len64(u) - 1 // >= sumSubBits
		m := int32(u>>(e-sumSubBits)) & (1<<sumSubBits - 1)
		b = int32(e-sumSubBits+1)<<sumSubBits | m
	}
	if neg {
		return -b - 1
	}
	return b
}

// sumBucketMid returns the middle of bucket b.
func sumBucketMid(b int32) int64 {
	neg := b < 0
	if neg {
		b = -b - 1
	}
	var v int64
	if b < 1<<sumSubBits {
		v = int64(b)
	} else {
		e := int(b>>sumSubBits) + sumSubBits - 1
		m := int64(b & (1<<sumSubBits - 1))
		lo := (1<<sumSubBits | m) << (e - sumSubBits)
		width := int64(1) << (e - sumSubBits)
		v = lo + width/2
	}
	if neg {
		return -v
	}
	return v
}

func (h *sumHist) add(v int64) {
	b := sumBucket(v)
	t := &h.pos
	if b < 0 {
		t, b = &h.neg, -b-1
	}
	g := int(b >> sumSubBits)
	if g >= len(*t) {
		*t = append(*t, make([][]uint64, g+1-len(*t))...)
	}
	c := (*t)[g]
	if c == nil {
		c = make([]uint64, 1<<sumSubBits)
		(*t)[g] = c
	}
	c[b&(1<<sumSubBits-1)]++
	h.n++
}

// buckets calls f with every bucket that holds values and its count, in
// increasing order of bucket (of value), until f returns false.
func (h *sumHist) buckets(f func(b int32, n uint64) bool) {
	for g := len(h.neg) - 1; g >= 0; g-- {
		c := h.neg[g]
		for i := len(c) - 1; i >= 0; i-- {
			if c[i] != 0 && !f(-int32(g<<sumSubBits|i)-1, c[i]) {
				return
			}
		}
	}
	for g, c := range h.pos {
		for i, n := range c {
			if n != 0 && !f(int32(g<<sumSubBits|i), n) {
				return
			}
		}
	}
}

// quantile returns the nearest-rank p-quantile's bucket midpoint.
func (h *sumHist) quantile(p float64) int64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(p * float64(h.n)))
	rank = max(rank, 1)
	var seen uint64
	var at int32
	found := false
	h.buckets(func(b int32, n uint64) bool {
		seen += n
		at = b // the last bucket when the rank is past them all
		found = seen >= rank
		return !found
	})
	return sumBucketMid(at)
}

// sumModeCap bounds the distinct seek distances counted exactly per row.
const sumModeCap = 4096

// sumSeek accumulates btt's seek statistics for one stream of I/Os.
type sumSeek struct {
	lastStart, lastEnd uint64
	lastDist           int64
	n                  uint64
	absSum             float64
	hist               sumHist
	modes              map[int64]uint64 // counts of the first sumModeCap distinct distances
}

// add records the I/O [start, end) and its seek distance from the previous.
func (s *sumSeek) add(start, end uint64) {
	var d int64
	switch {
	case (s.lastStart <= start && start <= s.lastEnd) || (s.lastStart <= end && end <= s.lastEnd):
		d = 0
	case start > s.lastEnd:
		d = int64(start - s.lastEnd)
	default:
		d = int64(start) - int64(s.lastStart)
	}
	s.lastStart, s.lastEnd = start, end
	s.lastDist = d
	s.addDist(d)
}

// addDist records a seek distance computed elsewhere (pooled rows).
func (s *sumSeek) addDist(d int64) {
	s.n++
	s.absSum += math.Abs(float64(d))
	s.hist.add(d)
	if s.modes == nil {
		s.modes = make(map[int64]uint64)
	}
	if len(s.modes) < sumModeCap {
		s.modes[d]++ // one map operation while the cap is not reached
	} else if n, ok := s.modes[d]; ok {
		s.modes[d] = n + 1
	}
}

func (s *sumSeek) result() SeekStats {
	if s.n == 0 {
		return SeekStats{Modes: []int64{}}
	}
	out := SeekStats{NSeeks: s.n, Mean: s.absSum / float64(s.n), Median: s.hist.quantile(0.5), Modes: []int64{}}
	for k, c := range s.modes {
		switch {
		case c > out.Count:
			out.Count, out.Modes = c, append(out.Modes[:0], k)
		case c == out.Count:
			out.Modes = append(out.Modes, k)
		}
	}
	slices.Sort(out.Modes)
	return out
}
