package diff

import (
	"slices"
)

// Process compares one process's I/O on the two sides, over each side's
// process contention window (every compared process had I/O queued or in
// flight; see window.go), with the active-span figures beside it.
type Process struct {
	PID    uint32 `json:"pid"`
	Comm   string `json:"comm"`   // the process's name as the real side records it ("" when unknown)
	Cgroup uint64 `json:"cgroup"` // cgroup id of its first bio on the real side
	// Compared says the process is one of those whose overlap defines the
	// process contention window.
	Compared bool `json:"compared"`

	RealMiBps float64 `json:"real_mib_per_s"`      // bytes completed in the real process window / its length
	PredMiBps float64 `json:"predicted_mib_per_s"` // the same on the predicted side
	RealShare float64 `json:"real_share"`          // the process's bytes / all bytes completed in the real window
	PredShare float64 `json:"predicted_share"`
	RealIOPS  float64 `json:"real_iops"`
	PredIOPS  float64 `json:"predicted_iops"`
	RealP50   float64 `json:"real_p50_seconds"` // Q2C of its bios completed in the window, s
	PredP50   float64 `json:"predicted_p50_seconds"`
	RealP99   float64 `json:"real_p99_seconds"`
	PredP99   float64 `json:"predicted_p99_seconds"`

	RealMiBpsSpan float64 `json:"real_mib_per_s_span"`      // bytes / the process's active span (first Q to last C)
	PredMiBpsSpan float64 `json:"predicted_mib_per_s_span"` // the same, predicted
	RealShareSpan float64 `json:"real_share_span"`          // RealMiBpsSpan / the sum over processes
	PredShareSpan float64 `json:"predicted_share_span"`

	RealBytes uint64 `json:"real_bytes"`
	PredBytes uint64 `json:"predicted_bytes"`
}

// compareProcesses builds the Process list (by pid) and the process windows.
func compareProcesses(real, pred *Side, opts Options) ([]Process, contention) {
	cw := contentionOf(real, pred, true, nil, int64(opts.Window))
	type acc struct {
		bytes       [2]uint64
		first, last [2]int64
		seen        [2]bool
		cgroup      uint64
	}
	procs := map[uint32]*acc{}
	skip := [2]map[int]bool{unfinishedBios(real, pred), unfinishedBios(pred, real)}
	streamed := !real.stream.off && !pred.stream.off && skip[0] == nil && skip[1] == nil
	for side, s := range []*Side{real, pred} {
		if !streamed {
			break
		}
		// The figures accumulated as the bios arrived (stream.go).
		for pid, p := range s.stream.pids {
			if !p.seen {
				continue
			}
			a := procs[pid]
			if a == nil {
				a = &acc{cgroup: p.cgroup}
				procs[pid] = a
			}
			a.seen[side] = true
			a.first[side], a.last[side], a.bytes[side] = min(p.firstDone, p.minQ), p.last, p.bytes
		}
	}
	for side, s := range []*Side{real, pred} {
		if streamed {
			break
		}
		for i := range s.NumBios() {
			done := s.bioDone(i)
			if !done.Valid() || done < 0 || skip[side][i] {
				continue
			}
			pid := s.bioPID(i)
			a := procs[pid]
			if a == nil {
				a = &acc{cgroup: s.bioCgroup(i)}
				procs[pid] = a
			}
			if !a.seen[side] {
				a.seen[side] = true
				a.first[side], a.last[side] = int64(done), int64(done)
			}
			if q := s.bioQueue(i); q.Valid() {
				a.first[side] = min(a.first[side], int64(q))
			}
			a.last[side] = max(a.last[side], int64(done))
			a.bytes[side] += uint64(s.bioBytes(i))
		}
	}
	rate := func(a *acc, side int) float64 {
		if a.bytes[side] == 0 || a.last[side] <= a.first[side] {
			return 0
		}
		return float64(a.bytes[side]) / mib / (float64(a.last[side]-a.first[side]) / 1e9)
	}
	pids := make([]uint32, 0, len(procs))
	for p := range procs {
		pids = append(pids, p)
	}
	slices.Sort(pids)
	var sum [2]float64
	for _, pid := range pids {
		sum[0] += rate(procs[pid], 0)
		sum[1] += rate(procs[pid], 1)
	}
	comm := map[uint32]string{}
	for i := range real.NumRequests() {
		if c := real.reqComm(i); c != "" {
			if _, ok := comm[real.reqPID(i)]; !ok {
				comm[real.reqPID(i)] = c
			}
		}
	}
	out := make([]Process, 0, len(pids))
	for _, pid := range pids {
		a := procs[pid]
		p := Process{PID: pid, Comm: comm[pid], Cgroup: a.cgroup, Compared: slices.Contains(cw.keys, uint64(pid)),
			RealBytes: a.bytes[0], PredBytes: a.bytes[1]}
		p.RealMiBpsSpan, p.PredMiBpsSpan = rate(a, 0), rate(a, 1)
		if sum[0] > 0 {
			p.RealShareSpan = p.RealMiBpsSpan / sum[0]
		}
		if sum[1] > 0 {
			p.PredShareSpan = p.PredMiBpsSpan / sum[1]
		}
		rf, pf := cw.real.figures(cw.real.keys[uint64(pid)]), cw.pred.figures(cw.pred.keys[uint64(pid)])
		p.RealMiBps, p.RealShare, p.RealIOPS, p.RealP50, p.RealP99 = rf.MiBps, rf.Share, rf.IOPS, rf.P50, rf.P99
		p.PredMiBps, p.PredShare, p.PredIOPS, p.PredP50, p.PredP99 = pf.MiBps, pf.Share, pf.IOPS, pf.P50, pf.P99
		out = append(out, p)
	}
	return out, cw
}
