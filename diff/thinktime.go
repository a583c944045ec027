package diff

import (
	"cmp"
	"math"
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
//     queues are classified (the kernel leaves async ones alone); an
//     empty PREFLUSH never reaches the scheduler and is left out, and on
//     a device with a write-back cache (the side has the flush
//     machinery's own flushes) a PREFLUSH request's data is inserted at
//     the head of the dispatch list, past its queue: it is neither
//     sampled, classified nor queued, but counts in flight from its issue
//     and its completion is the queue's last (sidePrep.thinkAtHead);
//  2. at each request insertion into a queue with nothing queued, nothing
//     in flight and not in service (bfq_bfqq_busy covers the in-service
//     queue idling empty; the spans come from the side's BFQ messages,
//     set_in_service_queue to expire; every insertion with
//     Options.LegacyThinkTime), a
//     sample e = min(now - last completion, 2*slice_idle) updates
//     samples = (7*samples + 256)/8, total = (7*total + 256*e)/8,
//     mean = (total + 128)/samples; a new queue's last completion is its
//     first bio's queue time + 1 ns; at one instant, a completion comes
//     before an insertion and an insertion before an issue, but a request
//     completing at the instant of its own issue (a replay's zero-time
//     service) after that issue, and an insertion and the in-service
//     messages of its instant in the trace's order (Side.Add notes it: a
//     replay stamps an insertion and the expiration or selection it caused
//     alike);
//  3. at every insertion the queue is long iff samples > 80 and
//     mean > slice_idle/2 (slice_idle with LegacyThinkTime), else short.
//
// Agreement compares, for each real request of a sync queue whose first
// bio the prediction also has, the real queue's class at that request's
// insertion with the predicted queue's class at the insertion of the
// predicted request serving that bio.
//
// BUG: without BFQ messages (a capture taken without them, another
// scheduler) the in-service spans are unknown: insertions into a queue
// idling in service are sampled here but not in the kernel. Queue merges
// (bfqSHARED-) are not followed: a merged process keeps its own queue. A
// queue's history before the capture is unknown: it starts as a new queue
// at its first request (fs-bfq-fsync-vs-seqread's jbd2 queue, older than
// the capture, was long at its first two expirations). At one instant, an
// insertion and another request's completion are taken in the order above
// whatever the trace's order (only in-service messages are followed).
type ThinkTime struct {
	Agreement float64 `json:"agreement"`       // fraction of compared requests whose classes agree; NaN (null in JSON, "n/a" in text) when none
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
	class  []int8         // per request index: -1 not classified, 0 short, 1 long
	queues []uint32       // sync queues' pids (sidePrep.queues)
	series [][]ThinkPoint // per queue, as queues
	logged []queueLogged  // sidePrep.logged
}

// Think-time event kinds, in their order at equal times: a completion
// before an insertion (a process's next request arriving at its last one's
// completion), an insertion before an issue; a request's completion at the
// instant of its own issue after that issue (ttCompleteLate).
const (
	ttComplete     = 0
	ttInsert       = 1
	ttIssue        = 2
	ttCompleteLate = 3
)

// samplesSettled is where ttime_samples settles from a new queue's 0:
// (7*249 + 256)/8 = 249.
const samplesSettled = 249

// computeThink replays each sync queue's life (its events sorted once per
// Side by sidePrep.prepThink) under opts.
func computeThink(s *Side, opts Options) thinkSide {
	p := s.prepared()
	ts := thinkSide{class: make([]int8, s.NumRequests()), queues: p.queues, series: make([][]ThinkPoint, len(p.queues)), logged: p.logged}
	for i := range ts.class {
		ts.class[i] = -1
	}
	slice := uint64(opts.SliceIdle)
	thr := slice / 2
	if opts.LegacyThinkTime {
		thr = slice
	}
	// One allocation for every queue's series (one point per insertion).
	all := make([]ThinkPoint, 0, p.inserts)
	service := inService(s)
	for k := range p.queues {
		ev := p.ev[p.off[k]:p.off[k+1]]
		spans := service[p.queues[k]]
		si := 0
		var queued, inflight int
		var samples, total, mean uint64
		lastEnd := p.firstQ[k] + 1
		short := true
		start := len(all)
		// nth: the insertion's place among the queue's insertions of
		// its instant (in request order, the trace's order of their I).
		lastIns, nth := trace.Time(math.MinInt64), uint32(0)
		for _, e := range ev {
			t, kind, ri := p.event(s, e)
			switch kind {
			case ttComplete, ttCompleteLate:
				inflight = max(inflight-1, 0)
				lastEnd = t
			case ttIssue:
				if !p.thinkAtHead(s, ri) {
					queued = max(queued-1, 0)
				}
				inflight++
			case ttInsert:
				if t == lastIns {
					nth++
				} else {
					lastIns, nth = t, 0
				}
				if p.thinkAtHead(s, ri) {
					continue // on bfqd->dispatch: neither sampled nor classified
				}
				for si < len(spans) && spans[si].endedBefore(t, nth) {
					si++
				}
				// bfq_bfqq_busy: the in-service queue stays busy while
				// it idles empty (bfq_remove_request keeps it on the
				// active tree until it expires).
				idling := si < len(spans) && spans[si].startedBefore(t, nth)
				if opts.LegacyThinkTime || (queued == 0 && inflight == 0 && !idling) {
					el := uint64(0)
					if t > lastEnd {
						el = uint64(t - lastEnd)
					}
					el = min(el, 2*slice)
					samples = (7*samples + 256) / 8
					total = (7*total + 256*el) / 8
					if samples == samplesSettled {
						mean = (total + 128) / samplesSettled // by a constant: a multiplication
					} else {
						mean = (total + 128) / samples
					}
				}
				short = opts.IdleOff || !(samples > 80 && mean > thr)
				all = append(all, ThinkPoint{Time: t, Mean: time.Duration(mean), Samples: uint32(samples), Short: short})
				if short {
					ts.class[ri] = 0
				} else {
					ts.class[ri] = 1
				}
				queued++
			}
		}
		ts.series[k] = all[start:len(all):len(all)]
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
	for _, ql := range ts.logged {
		if !ql.q.Sync {
			continue
		}
		series := ts.seriesOf(ql.q)
		for _, p := range ql.pts {
			la.Points++
			if classAt(series, p.Time) == p.Short {
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
	// Every queue reported is a sync queue: number them by pid.
	qidx := make(map[uint32]int32, len(rt.queues)+len(pt.queues))
	var per []QueueThink
	var agreeQ []int
	getQ := func(pid uint32) int32 {
		k, ok := qidx[pid]
		if !ok {
			k = int32(len(per))
			qidx[pid] = k
			per = append(per, QueueThink{Queue: queueID{pid, true}.String(), PID: pid, Sync: true, Agreement: 1})
			agreeQ = append(agreeQ, 0)
		}
		return k
	}
	agree := 0
	lastPID, lastK := uint32(0), int32(-1)
	for k := range rIdx {
		// Real requests by their first bio, found among the matched bios.
		rb := int(rIdx[k])
		i := real.Request(real.bioRequest(rb))
		if i < 0 {
			continue
		}
		rc := rt.class[i]
		pid := real.bioPID(rb)
		if rc < 0 || real.reqPID(i) != pid || real.reqFirstBio(i) != real.bioIndex(rb) {
			continue
		}
		pi := pred.Request(pred.bioRequest(int(pIdx[k])))
		if pi < 0 || pt.class[pi] < 0 {
			continue
		}
		pc := pt.class[pi]
		tt.Compared++
		tt.Confusion[rc][pc]++
		if lastK < 0 || pid != lastPID {
			lastPID, lastK = pid, getQ(pid)
		}
		per[lastK].Compared++
		if rc == pc {
			agree++
			agreeQ[lastK]++
		}
	}
	if tt.Compared > 0 {
		tt.Agreement = float64(agree) / float64(tt.Compared)
	} else {
		tt.Agreement = math.NaN() // nothing compared: n/a, not 100 %
	}
	for _, side := range []struct {
		ts   thinkSide
		real bool
	}{{rt, true}, {pt, false}} {
		for qk, pid := range side.ts.queues {
			series := side.ts.series[qk]
			p := &per[getQ(pid)]
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
		for _, ql := range side.ts.logged {
			if !ql.q.Sync {
				continue
			}
			p := &per[getQ(ql.q.PID)]
			fl := flips(ql.pts, func(p LoggedPoint) bool { return p.Short })
			if side.real {
				p.RealLoggedFlips, p.RealLogged = fl, ql.pts
			} else {
				p.PredLoggedFlips, p.PredLogged = fl, ql.pts
			}
		}
	}
	tt.RealLogged = loggedAgreement(rt)
	tt.PredLogged = loggedAgreement(pt)
	for k := range per {
		if p := &per[k]; p.Compared > 0 {
			p.Agreement = float64(agreeQ[k]) / float64(p.Compared)
		}
	}
	slices.SortFunc(per, func(a, b QueueThink) int { return cmp.Compare(a.PID, b.PID) })
	if per == nil {
		per = []QueueThink{}
	}
	tt.PerQueue = per
	tt.Queues = len(tt.PerQueue)
	return tt
}

// seriesOf returns queue q's series, nil when q has none.
func (ts thinkSide) seriesOf(q queueID) []ThinkPoint {
	if !q.Sync {
		return nil
	}
	if k := slices.Index(ts.queues, q.PID); k >= 0 {
		return ts.series[k]
	}
	return nil
}

// serviceSpan is a time during which a queue was BFQ's in-service queue:
// from its "set_in_service_queue" to the message that ended it, with the
// queue's own insertions of those instants that came before each message
// in the trace (Side.insertsBefore: in a replay, an insertion and the
// expiration or selection it caused share a timestamp).
type serviceSpan struct {
	from, to       trace.Time
	fromIns, toIns uint32
}

// endedBefore reports whether the span ended before the queue's insertion
// at t, the nth (from 0) of the queue's insertions at t.
func (sp serviceSpan) endedBefore(t trace.Time, nth uint32) bool {
	return sp.to < t || sp.to == t && nth >= sp.toIns
}

// startedBefore reports whether the span began before that insertion.
func (sp serviceSpan) startedBefore(t trace.Time, nth uint32) bool {
	return sp.from < t || sp.from == t && nth >= sp.fromIns
}

// inService returns, per pid, the spans during which the pid's sync queue
// was BFQ's in-service queue, as the side's messages show them: from its
// "set_in_service_queue" to its "expire" or the next queue's
// "set_in_service_queue" (one queue is in service at a time; some paths
// expire a queue without the message, __bfq_bfqq_expire from
// bfq_exit_bfqq). A span still open at the side's end runs on to its end.
// Nil when the side logged no such messages.
func inService(s *Side) map[uint32][]serviceSpan {
	var out map[uint32][]serviceSpan
	var cur serviceSpan
	var pid uint32
	have := false
	closeSpan := func(i int, t trace.Time) {
		if !have {
			return
		}
		have = false
		if out == nil {
			out = map[uint32][]serviceSpan{}
		}
		cur.to, cur.toIns = t, s.insertsBefore(i, pid)
		out[pid] = append(out[pid], cur)
	}
	for i := range s.Messages.Len() {
		m := s.Messages.At(i)
		switch {
		case strings.HasPrefix(m.Msg.Body, "set_in_service_queue"):
			closeSpan(i, m.Time)
			if m.Msg.PID > 0 && m.Msg.Sync {
				pid, have = uint32(m.Msg.PID), true
				cur = serviceSpan{from: m.Time, fromIns: s.insertsBefore(i, pid)}
			}
		case strings.HasPrefix(m.Msg.Body, "expire ("):
			if have && m.Msg.PID > 0 && uint32(m.Msg.PID) == pid && m.Msg.Sync {
				closeSpan(i, m.Time)
			}
		}
	}
	if have {
		if out == nil {
			out = map[uint32][]serviceSpan{}
		}
		cur.to, cur.toIns = trace.Time(math.MaxInt64), 0
		out[pid] = append(out[pid], cur)
	}
	return out
}
