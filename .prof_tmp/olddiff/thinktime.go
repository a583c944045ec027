package olddiff

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// ThinkPoint is a queue's think-time state right after one of its request
// insertions: BFQ's statistic recomputed from the side's timing.
type ThinkPoint struct {
	Time    trace.Time    // ns: the insertion
	Mean    time.Duration // ttime_mean
	Samples uint32        // ttime_samples (fixed point: one sample = 256; valid above 80)
	Short   bool          // has_short_ttime after the update
}

// LoggedPoint is a think-time class the scheduler itself logged
// ("expire (reason, slow S, num_disp N, short_ttime X)" or
// "has_short_ttime N").
type LoggedPoint struct {
	Time  trace.Time // ns
	Short bool
}

// QueueThink compares one (process, sync) queue's think-time class.
type QueueThink struct {
	Queue        string `json:"queue"` // "<pid>S" or "<pid>A"
	PID          uint32 `json:"pid"`
	Sync         bool   `json:"sync"`
	RealRequests int    `json:"real_requests"`
	PredRequests int    `json:"predicted_requests"`
	// Fractions of the queue's requests inserted while it was short.
	RealShortFraction float64 `json:"real_short_fraction"`
	PredShortFraction float64 `json:"predicted_short_fraction"`
	// Flips counts class changes of the recomputed class; LoggedFlips of the
	// class the scheduler logged.
	RealFlips       int `json:"real_flips"`
	PredFlips       int `json:"predicted_flips"`
	RealLoggedFlips int `json:"real_logged_flips"`
	PredLoggedFlips int `json:"predicted_logged_flips"`
	// Final ttime_mean, seconds.
	RealFinalMean float64 `json:"real_final_mean"`
	PredFinalMean float64 `json:"predicted_final_mean"`
	Compared      int     `json:"compared"`  // requests compared (see ThinkTime)
	Agreement     float64 `json:"agreement"` // fraction of them whose classes agree; 1 when none

	RealSeries, PredSeries []ThinkPoint  `json:"-"`
	RealLogged, PredLogged []LoggedPoint `json:"-"`
}

// LoggedAgreement compares the class recomputed from a side's timing with
// the class its scheduler logged at the same moments: a check of the
// recomputation itself.
type LoggedAgreement struct {
	Points    int     `json:"points"`    // logged classes of (pid, sync) queues
	Agreement float64 `json:"agreement"` // fraction where the recomputed class agrees; 0 when no points
}

// ThinkTime compares think-time classification, following BFQ
// (bfq_update_io_thinktime, bfq_update_has_short_ttime, Linux 5.12 on):
//
//  1. a queue is a process and a direction (sync or async); only sync
//     queues are classified (the kernel leaves async ones alone);
//  2. at each request insertion into a queue with nothing queued and
//     nothing in flight (every insertion with Options.LegacyThinkTime), a
//     sample e = min(now - last completion, 2*slice_idle) updates
//     samples = (7*samples + 256)/8, total = (7*total + 256*e)/8,
//     mean = (total + 128)/samples; a new queue's last completion is its
//     first bio's queue time + 1 ns;
//  3. at every insertion the queue is long iff samples > 80 and
//     mean > slice_idle/2 (slice_idle with LegacyThinkTime), else short.
//
// Agreement compares, for each real request of a sync queue whose first
// bio the prediction also has, the real queue's class at that request's
// insertion with the predicted queue's class at the insertion of the
// predicted request serving that bio.
//
// BUG: the kernel's busy flag also covers an in-service queue that is
// empty and idling, which the trace does not show: insertions into such a
// queue are sampled here but not in the kernel. Queue merges (bfqSHARED-)
// are not followed: a merged process keeps its own queue.
type ThinkTime struct {
	Agreement float64 `json:"agreement"`       // fraction of compared requests whose classes agree; 1 when none
	Queues    int     `json:"queues"`          // sync queues on either side
	RealShort int     `json:"real_short"`      // sync queues short for at least half their requests, real
	PredShort int     `json:"predicted_short"` // the same, predicted
	Compared  int     `json:"compared"`
	// Confusion[r][p] counts compared requests with real class r and
	// predicted class p, 0 = short, 1 = long.
	Confusion        [2][2]int       `json:"confusion"`
	ThresholdSeconds float64         `json:"threshold_seconds"` // the long/short threshold on the mean, s
	RealLogged       LoggedAgreement `json:"real_logged"`
	PredLogged       LoggedAgreement `json:"predicted_logged"`
	PerQueue         []QueueThink    `json:"per_queue"` // sync queues, by pid
}

// thinkSide is one side's recomputed think-time state.
type thinkSide struct {
	class  []int8 // per request index: -1 not classified, 0 short, 1 long
	series map[queueID][]ThinkPoint
	logged map[queueID][]LoggedPoint
	reqs   map[queueID]int
}

// Think-time event kinds, in their order at equal times.
const (
	ttComplete = 0
	ttInsert   = 1
	ttIssue    = 2
)

// ttEvent packs an event of a request as a keyed: t = time*4 + kind, c =
// the request's index, so that a stable sort by t of events laid out in
// request order sorts them by (time, kind, request).
func ttEvent(t trace.Time, kind int, req int) keyed { return keyed{t*4 + trace.Time(kind), int32(req)} }

func computeThink(s *Side, opts Options) thinkSide {
	ts := thinkSide{class: make([]int8, len(s.Requests)), series: map[queueID][]ThinkPoint{}, logged: map[queueID][]LoggedPoint{}, reqs: map[queueID]int{}}
	// 1. Number the sync queues and count their events.
	qIndex := map[queueID]int32{}
	var queues []queueID
	var counts []int
	var firstQ []trace.Time
	rq := make([]int32, len(s.Requests))
	for i := range s.Requests {
		r := &s.Requests[i]
		ts.class[i] = -1
		rq[i] = -1
		q := queueID{r.PID, isSync(r.Cat)}
		ins := r.Insert
		if !ins.Valid() {
			ins = r.Queue
		}
		if !q.Sync || r.Flags&trace.FlagMergedAway != 0 || !ins.Valid() {
			continue
		}
		k, ok := qIndex[q]
		if !ok {
			k = int32(len(queues))
			qIndex[q] = k
			queues = append(queues, q)
			counts = append(counts, 0)
			firstQ = append(firstQ, ins)
		}
		rq[i] = k
		counts[k] += 3
		qt := r.Queue
		if !qt.Valid() {
			qt = ins
		}
		firstQ[k] = min(firstQ[k], qt)
	}
	// 2. Lay every queue's events out in one array.
	off := make([]int, len(queues)+1)
	for k, c := range counts {
		off[k+1] = off[k] + c
	}
	fill := slices.Clone(off[:len(queues)])
	events := make([]keyed, off[len(queues)])
	for i := range s.Requests {
		k := rq[i]
		if k < 0 {
			continue
		}
		r := &s.Requests[i]
		ins := r.Insert
		if !ins.Valid() {
			ins = r.Queue
		}
		events[fill[k]] = ttEvent(ins, ttInsert, i)
		fill[k]++
		if r.Issue.Valid() {
			events[fill[k]] = ttEvent(r.Issue, ttIssue, i)
			fill[k]++
		}
		if r.Complete.Valid() {
			events[fill[k]] = ttEvent(r.Complete, ttComplete, i)
			fill[k]++
		}
	}
	slice := uint64(opts.SliceIdle)
	thr := slice / 2
	if opts.LegacyThinkTime {
		thr = slice
	}
	// 3. Replay each queue's life: complete, insert, issue at equal times.
	buf := make([]keyed, 0)
	for k := range queues {
		if n := fill[k] - off[k]; n > len(buf) {
			buf = make([]keyed, n)
		}
	}
	for k, q := range queues {
		ev := events[off[k]:fill[k]]
		radixSort(ev, buf)
		var queued, inflight int
		var samples, total, mean uint64
		lastEnd := firstQ[k] + 1
		short := true
		series := make([]ThinkPoint, 0, counts[k]/3)
		for _, e := range ev {
			t := e.t >> 2
			switch e.t & 3 {
			case ttComplete:
				inflight = max(inflight-1, 0)
				lastEnd = t
			case ttIssue:
				queued = max(queued-1, 0)
				inflight++
			case ttInsert:
				if opts.LegacyThinkTime || (queued == 0 && inflight == 0) {
					el := uint64(0)
					if t > lastEnd {
						el = uint64(t - lastEnd)
					}
					el = min(el, 2*slice)
					samples = (7*samples + 256) / 8
					total = (7*total + 256*el) / 8
					mean = (total + 128) / samples
				}
				short = !(samples > 80 && mean > thr)
				series = append(series, ThinkPoint{Time: t, Mean: time.Duration(mean), Samples: uint32(samples), Short: short})
				if short {
					ts.class[e.c] = 0
				} else {
					ts.class[e.c] = 1
				}
				queued++
			}
		}
		ts.reqs[q] = len(series)
		ts.series[q] = series
	}
	// The scheduler's own view, where it logs one.
	for i := range s.Messages {
		m := &s.Messages[i]
		if m.Msg.PID <= 0 {
			continue
		}
		v, ok := loggedShort(m.Msg.Body)
		if !ok {
			continue
		}
		q := queueID{uint32(m.Msg.PID), m.Msg.Sync}
		ts.logged[q] = append(ts.logged[q], LoggedPoint{Time: m.Time, Short: v})
	}
	return ts
}

// loggedShort extracts the short think-time flag from a BFQ message body:
// "expire (R, slow S, num_disp N, short_ttime X)", "update_has_short_ttime:
// has_short_ttime X" or "rq_enqueued: has_short_ttime=X (seeky S)".
func loggedShort(body string) (short, ok bool) {
	var rest string
	switch {
	case strings.HasPrefix(body, "expire ("):
		i := strings.Index(body, "short_ttime ")
		if i < 0 {
			return false, false
		}
		rest = body[i+len("short_ttime "):]
	default:
		i := strings.LastIndex(body, "has_short_ttime")
		if i < 0 {
			return false, false
		}
		rest = strings.TrimLeft(body[i+len("has_short_ttime"):], " =")
	}
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	v, err := strconv.Atoi(rest[:j])
	if err != nil {
		return false, false
	}
	return v != 0, true
}

// classAt returns whether q was short at time t by its series (short before
// its first insertion, as a new sync queue is).
func classAt(series []ThinkPoint, t trace.Time) bool {
	i, _ := slices.BinarySearchFunc(series, t, func(p ThinkPoint, t trace.Time) int {
		if p.Time <= t {
			return -1
		}
		return 1
	})
	if i == 0 {
		return true
	}
	return series[i-1].Short
}

func flips[T any](xs []T, short func(T) bool) int {
	n := 0
	for i := 1; i < len(xs); i++ {
		if short(xs[i]) != short(xs[i-1]) {
			n++
		}
	}
	return n
}

func loggedAgreement(ts thinkSide) LoggedAgreement {
	var la LoggedAgreement
	agree := 0
	for q, pts := range ts.logged {
		if !q.Sync {
			continue
		}
		for _, p := range pts {
			la.Points++
			if classAt(ts.series[q], p.Time) == p.Short {
				agree++
			}
		}
	}
	if la.Points > 0 {
		la.Agreement = float64(agree) / float64(la.Points)
	}
	return la
}

func compareThink(real, pred *Side, rIdx, pIdx []int32, opts Options) ThinkTime {
	rt, pt := computeThink(real, opts), computeThink(pred, opts)
	tt := ThinkTime{Agreement: 1, ThresholdSeconds: opts.SliceIdle.Seconds() / 2}
	if opts.LegacyThinkTime {
		tt.ThresholdSeconds = opts.SliceIdle.Seconds()
	}
	per := map[queueID]*QueueThink{}
	agreeQ := map[queueID]int{}
	getQ := func(q queueID) *QueueThink {
		p := per[q]
		if p == nil {
			p = &QueueThink{Queue: q.String(), PID: q.PID, Sync: q.Sync, Agreement: 1}
			per[q] = p
		}
		return p
	}
	agree := 0
	for k := range rIdx {
		// Real requests by their first bio, found among the matched bios.
		rb := &real.Bios[rIdx[k]]
		i := real.Request(rb.Request)
		if i < 0 {
			continue
		}
		r := &real.Requests[i]
		rc := rt.class[i]
		if rc < 0 || r.PID != rb.PID || r.FirstBio != rb.Index {
			continue
		}
		pi := pred.Request(pred.Bios[pIdx[k]].Request)
		if pi < 0 || pt.class[pi] < 0 {
			continue
		}
		pc := pt.class[pi]
		tt.Compared++
		tt.Confusion[rc][pc]++
		q := queueID{r.PID, true}
		getQ(q).Compared++
		if rc == pc {
			agree++
			agreeQ[q]++
		}
	}
	if tt.Compared > 0 {
		tt.Agreement = float64(agree) / float64(tt.Compared)
	}
	for _, side := range []struct {
		ts   thinkSide
		real bool
	}{{rt, true}, {pt, false}} {
		for q, series := range side.ts.series {
			p := getQ(q)
			nShort := 0
			for _, sp := range series {
				if sp.Short {
					nShort++
				}
			}
			frac := 0.0
			if len(series) > 0 {
				frac = float64(nShort) / float64(len(series))
			}
			fl := flips(series, func(p ThinkPoint) bool { return p.Short })
			final := 0.0
			if len(series) > 0 {
				final = series[len(series)-1].Mean.Seconds()
			}
			if side.real {
				p.RealRequests, p.RealShortFraction, p.RealFlips, p.RealFinalMean, p.RealSeries = len(series), frac, fl, final, series
				if len(series) > 0 && 2*nShort >= len(series) {
					tt.RealShort++
				}
			} else {
				p.PredRequests, p.PredShortFraction, p.PredFlips, p.PredFinalMean, p.PredSeries = len(series), frac, fl, final, series
				if len(series) > 0 && 2*nShort >= len(series) {
					tt.PredShort++
				}
			}
		}
		for q, pts := range side.ts.logged {
			if !q.Sync {
				continue
			}
			p := getQ(q)
			fl := flips(pts, func(p LoggedPoint) bool { return p.Short })
			if side.real {
				p.RealLoggedFlips, p.RealLogged = fl, pts
			} else {
				p.PredLoggedFlips, p.PredLogged = fl, pts
			}
		}
	}
	tt.RealLogged = loggedAgreement(rt)
	tt.PredLogged = loggedAgreement(pt)
	tt.PerQueue = make([]QueueThink, 0, len(per))
	for q, p := range per {
		if p.Compared > 0 {
			p.Agreement = float64(agreeQ[q]) / float64(p.Compared)
		}
		tt.PerQueue = append(tt.PerQueue, *p)
	}
	slices.SortFunc(tt.PerQueue, func(a, b QueueThink) int {
		return queueID{a.PID, a.Sync}.less(queueID{b.PID, b.Sync})
	})
	tt.Queues = len(tt.PerQueue)
	return tt
}
