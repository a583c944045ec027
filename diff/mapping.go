package diff

import (
	"cmp"
	"slices"

	"github.com/tracesched/tracesched/trace"
)

// Two real runs of one workload (before and after a kernel upgrade, two
// weight settings) share no (PID, Index): their processes have other pids
// and their cgroups other ids. The functions below pair them so that
// Compare lines the runs up bio by bio.

// procInfo is one process of a Side: its name and first Q.
type procInfo struct {
	pid   uint32
	comm  string
	first trace.Time
}

// processes returns the Side's processes with the name their first
// request carries and the time of their first bio, by pid.
func processes(s *Side) []procInfo {
	s.finish()
	comm := map[uint32]string{}
	for i := range s.NumRequests() {
		if _, ok := comm[s.reqPID(i)]; !ok && s.reqComm(i) != "" {
			comm[s.reqPID(i)] = s.reqComm(i)
		}
	}
	var out []procInfo
	for i := range s.NumBios() {
		pid, q := s.bioPID(i), s.bioQueue(i)
		if n := len(out); n > 0 && out[n-1].pid == pid {
			if q.Valid() && (!out[n-1].first.Valid() || q < out[n-1].first) {
				out[n-1].first = q
			}
			continue
		}
		out = append(out, procInfo{pid: pid, comm: comm[pid], first: q})
	}
	return out
}

// MapByCommand pairs the processes of pred with those of real by command
// name and start order: the k-th process named C to queue a bio on the
// predicted side is the k-th named C on the real side. It returns
// predicted pid -> real pid for every pair (processes without a name, or
// beyond the other side's count for their name, are left out).
func MapByCommand(real, pred *Side) map[uint32]uint32 {
	byComm := func(ps []procInfo) map[string][]procInfo {
		m := map[string][]procInfo{}
		for _, p := range ps {
			if p.comm != "" {
				m[p.comm] = append(m[p.comm], p)
			}
		}
		for _, l := range m {
			slices.SortStableFunc(l, func(a, b procInfo) int {
				if c := cmp.Compare(a.first, b.first); c != 0 {
					return c
				}
				return cmp.Compare(a.pid, b.pid)
			})
		}
		return m
	}
	rm, pm := byComm(processes(real)), byComm(processes(pred))
	out := map[uint32]uint32{}
	for c, pl := range pm {
		rl := rm[c]
		for k := 0; k < len(pl) && k < len(rl); k++ {
			out[pl[k].pid] = rl[k].pid
		}
	}
	return out
}

// MapCgroupsByPath pairs cgroups with the same path in the two Sides'
// Meta.Cgroups: predicted id -> real id, for the ids that differ.
func MapCgroupsByPath(real, pred *Side) map[uint64]uint64 {
	byPath := map[string]uint64{}
	for id, p := range real.Meta.Cgroups {
		if p != "" {
			byPath[p] = id
		}
	}
	out := map[uint64]uint64{}
	for id, p := range pred.Meta.Cgroups {
		if rid, ok := byPath[p]; ok && rid != id {
			out[id] = rid
		}
	}
	return out
}

// Remap returns a copy of s (finished) whose pids and cgroup ids are
// renamed by pids and cgroups (old -> new; ids not in a map are kept):
// those of its bios, requests and scheduler messages (the queue a message
// names, bfq1234S, is its process's).
// A kept pid that a renamed one takes is moved out of the way (to
// 0x80000000 | pid), so no two processes merge. s is not modified.
func (s *Side) Remap(pids map[uint32]uint32, cgroups map[uint64]uint64) *Side {
	s.finish()
	taken := map[uint32]bool{}
	for _, to := range pids {
		taken[to] = true
	}
	pid := func(p uint32) uint32 {
		if to, ok := pids[p]; ok {
			return to
		}
		if taken[p] {
			return 0x80000000 | p
		}
		return p
	}
	cg := func(c uint64) uint64 {
		if to, ok := cgroups[c]; ok {
			return to
		}
		return c
	}
	bios := s.BioSlice()
	for i := range bios {
		bios[i].PID, bios[i].Cgroup = pid(bios[i].PID), cg(bios[i].Cgroup)
	}
	reqs := s.RequestSlice()
	for i := range reqs {
		reqs[i].PID, reqs[i].Cgroup = pid(reqs[i].PID), cg(reqs[i].Cgroup)
	}
	msgs := s.Messages.Slice()
	for i := range msgs {
		msgs[i].Cgroup = cg(msgs[i].Cgroup)
		if p := msgs[i].Msg.PID; p > 0 { // a queue's pid (-1 a shared queue, 0 none)
			msgs[i].Msg.PID = int32(pid(uint32(p)))
		}
	}
	meta := s.Meta
	if len(cgroups) > 0 && meta.Cgroups != nil {
		m := make(map[uint64]string, len(meta.Cgroups))
		for id, p := range meta.Cgroups {
			m[cg(id)] = p
		}
		meta.Cgroups = m
	}
	out := FromData(meta, bios, reqs, msgs)
	out.Stats = s.Stats
	// By message index (the messages keep their order) and the pids of the
	// insertions, renamed as the bios are.
	out.insertTies = make([]insertTie, len(s.insertTies))
	for k, tie := range s.insertTies {
		c := slices.Clone(tie.counts)
		for j := range c {
			c[j].pid = pid(c[j].pid)
		}
		out.insertTies[k] = insertTie{msg: tie.msg, counts: c}
	}
	return out
}

// MapCgroupsByProcess pairs the cgroups of processes paired by pids
// (predicted pid -> real pid): a predicted process's cgroup (that of its
// first bio) goes to its real partner's. Cgroups already in have are kept
// as they are; the pairs found are added to have and returned with it.
// blktrace records cgroup ids, not paths, so this is how two runs whose
// cgroups were recreated (other ids) are lined up.
func MapCgroupsByProcess(real, pred *Side, pids map[uint32]uint32, have map[uint64]uint64) map[uint64]uint64 {
	if have == nil {
		have = map[uint64]uint64{}
	}
	first := func(s *Side) map[uint32]uint64 {
		m := map[uint32]uint64{}
		for i := range s.NumBios() {
			if _, ok := m[s.bioPID(i)]; !ok {
				m[s.bioPID(i)] = s.bioCgroup(i)
			}
		}
		return m
	}
	rc, pc := first(real), first(pred)
	// Deterministic: by predicted pid.
	ps := make([]uint32, 0, len(pids))
	for p := range pids {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	for _, p := range ps {
		from, ok1 := pc[p]
		to, ok2 := rc[pids[p]]
		if _, done := have[from]; ok1 && ok2 && !done && from != to {
			have[from] = to
		}
	}
	return have
}
