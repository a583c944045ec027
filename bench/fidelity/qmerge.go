package main

import (
	"fmt"
	"io"
	"time"

	"strconv"
	"strings"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
)

// qmerge is one queue merge, as the kernel logged it and as the model made
// it: Queue was merged into the queue of Partner ("shared" for a queue
// that is itself already shared: the kernel logs its pid as -1, which
// blktrace's ftrace text prints unsigned). Real or Pred is trace.NoTime
// when that side made no such merge.
type qmerge struct {
	Queue, Partner string
	Real, Pred     trace.Time
	// RealBio and PredBio are the index, in its process's stream, of the
	// last bio the merged queue's process queued at or before the merge
	// (bfq_setup_cooperator runs as a bio or request of the queue arrives,
	// so this is the bio the merge came with); -1 when there is none or
	// the side made no such merge.
	RealBio, PredBio int
	// RealPrev and PredPrev are when the bio before RealBio (PredBio) was
	// queued: the merge became due after it (trace.NoTime: no such bio).
	RealPrev, PredPrev trace.Time
}

// mergePartner returns the partner of a "merging with queue N" body: N,
// or "shared" for -1 in either spelling; "" for any other body.
func mergePartner(body string) string {
	rest, ok := strings.CutPrefix(body, "merging with queue ")
	if !ok {
		return ""
	}
	rest, _, _ = strings.Cut(rest, " ")
	if rest == "-1" || rest == strconv.FormatUint(^uint64(0), 10) {
		return "shared"
	}
	return rest
}

// pairMerges pairs the real and predicted queue merges by queue and
// partner, the i-th of a pair on one side with the i-th on the other, in
// time order of the real side (then the predicted merges the kernel never
// made, in their own order). Both lists are in time order.
func pairMerges(realSide, predSide *diff.Side, real, pred []diff.QueueMerge) []qmerge {
	type key struct{ q, p string }
	var out []qmerge
	open := map[key][]int{} // indices into out of real merges not yet paired
	for _, m := range real {
		k := key{m.Queue, mergePartner(m.Text)}
		open[k] = append(open[k], len(out))
		q := qmerge{Queue: k.q, Partner: k.p, Real: m.Time, Pred: trace.NoTime, PredBio: -1, PredPrev: trace.NoTime}
		q.RealBio, q.RealPrev = lastBio(realSide, k.q, m.Time)
		out = append(out, q)
	}
	for _, m := range pred {
		k := key{m.Queue, mergePartner(m.Text)}
		if idx := open[k]; len(idx) > 0 {
			out[idx[0]].Pred = m.Time
			out[idx[0]].PredBio, out[idx[0]].PredPrev = lastBio(predSide, k.q, m.Time)
			open[k] = idx[1:]
			continue
		}
		q := qmerge{Queue: k.q, Partner: k.p, Real: trace.NoTime, Pred: m.Time, RealBio: -1, RealPrev: trace.NoTime}
		q.PredBio, q.PredPrev = lastBio(predSide, k.q, m.Time)
		out = append(out, q)
	}
	return out
}

// writeQueueMerges writes, for each capture replayed through BFQ whose
// capture or replay made a queue merge, every merge with the time the
// kernel logged it and the time the model made it.
func writeQueueMerges(w io.Writer, level string, rs []*result) {
	var sel []*result
	for _, r := range rs {
		if f := r.Own; f != nil && f.Spec.Model == "bfq" && len(f.QMerges) > 0 {
			sel = append(sel, r)
		}
	}
	if len(sel) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s Queue merges at the times the kernel logged them\n\n", level)
	fmt.Fprintf(w, "Every queue merge (bfq_merge_bfqqs: \"merging with queue\") of a capture replayed through the BFQ model, in the\n")
	fmt.Fprintf(w, "kernel's messages and in the model's, paired by the queue merged and the queue it joined (\"shared\": a queue already\n")
	fmt.Fprintf(w, "shared, logged as pid -1). Times are seconds from the capture's first event. BFQ looks for a merge only when a bio or\n")
	fmt.Fprintf(w, "request of the queue arrives (bfq_setup_cooperator), so the kernel's merge became due between the queue's previous\n")
	fmt.Fprintf(w, "arrival and the time it logged: a merge of the model passes when its own such interval meets the kernel's within\n")
	fmt.Fprintf(w, "%.0f ms (a jiffy at HZ 250). \"with bio\": the index, in its process's stream, of the bio the merge came with.\n\n", 1e3*mergeSlack.Seconds())
	fmt.Fprintf(w, "| capture | queue | joined | kernel, s | model, s | model - kernel, ms | with bio, kernel / model | |\n")
	fmt.Fprintf(w, "|---|---|---|---:|---:|---:|---:|---|\n")
	for _, r := range sel {
		f := r.Own
		for _, m := range f.QMerges {
			kt, mt, dt := "-", "-", "-"
			ok := m.Real != trace.NoTime && m.Pred != trace.NoTime
			if m.Real != trace.NoTime {
				kt = fmt.Sprintf("%.4f", m.Real.Seconds())
			} else if !f.RealMessages {
				kt = "no messages"
			}
			if m.Pred != trace.NoTime {
				mt = fmt.Sprintf("%.4f", m.Pred.Seconds())
			}
			if ok {
				dt = fmt.Sprintf("%+.1f", 1e3*time.Duration(m.Pred-m.Real).Seconds())
				ok = m.dueTogether()
			}
			bt := fmt.Sprintf("%s / %s", bioText(m.RealBio), bioText(m.PredBio))
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.C.Name, m.Queue, m.Partner, kt, mt, dt, bt, verdict(ok))
		}
	}
}

// mergeSlack is how far apart the intervals dueTogether compares may be: one jiffy at
// HZ 250 (the replays' and the recording kernels' CONFIG_HZ), the
// resolution of the times BFQ's merge rules compare.
const mergeSlack = 4 * time.Millisecond

// dueTogether reports whether the merge can have become due at one
// instant on both sides. BFQ looks for a merge only when a bio or request
// of the queue arrives (bfq_setup_cooperator, from bfq_allow_bio_merge and
// __bfq_insert_request), so a merge logged at t with the queue's previous
// arrival at p became due in (p, t]: the two sides' intervals must meet
// within mergeSlack. A merge without a previous arrival
// (the queue's first bio) became due at its time.
func (m qmerge) dueTogether() bool {
	lo := func(prev, at trace.Time) trace.Time {
		if prev == trace.NoTime {
			return at
		}
		return prev
	}
	slack := trace.Time(mergeSlack)
	return lo(m.RealPrev, m.Real) <= m.Pred+slack && lo(m.PredPrev, m.Pred) <= m.Real+slack
}

// lastBio returns the index of the last bio that the process of the queue
// named queue ("bfq1234S") queued at or before t on side s, and when the
// bio before it was queued (trace.NoTime when there is none); -1 when the
// process queued nothing by then.
func lastBio(s *diff.Side, queue string, t trace.Time) (int, trace.Time) {
	digits := strings.TrimRight(strings.TrimLeft(queue, "abcdefghijklmnopqrstuvwxyz"), "SA")
	pid, err := strconv.ParseUint(digits, 10, 32)
	if err != nil {
		return -1, trace.NoTime
	}
	best, last, prev := -1, trace.NoTime, trace.NoTime // the last two Q times at or before t
	for i := range s.NumBios() {
		b := s.BioAt(i)
		if b.PID != uint32(pid) || b.Queue > t {
			continue
		}
		switch {
		case last == trace.NoTime || b.Queue > last:
			prev, last, best = last, b.Queue, int(b.Index)
		case prev == trace.NoTime || b.Queue > prev:
			prev = b.Queue
		}
	}
	return best, prev
}

func bioText(i int) string {
	if i < 0 {
		return "-"
	}
	return strconv.Itoa(i)
}
