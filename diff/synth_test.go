package diff

import (
	"cmp"
	"math/rand/v2"
	"slices"

	"github.com/tracesched/tracesched/trace"
)

// synth builds n single-bio read requests from procs processes (cgroup =
// 1000 + pid%2), one issued every 100 µs, each served in 50-250 µs; every
// fourth bio is a back merge into the previous request of its process.
func synth(n, procs int, seed uint64) ([]trace.Bio, []trace.Request) {
	rng := rand.New(rand.NewPCG(seed, 1))
	bios := make([]trace.Bio, 0, n)
	reqs := make([]trace.Request, 0, n)
	next := make([]uint32, procs)
	last := make([]int, procs)
	for i := range last {
		last[i] = -1
	}
	for i := 0; i < n; i++ {
		p := rng.IntN(procs)
		pid := uint32(100 + p)
		t := trace.Time(i) * 100_000
		b := trace.Bio{PID: pid, Index: next[p], Bytes: 4096, Cat: trace.CatRead, Cgroup: 1000 + uint64(pid%2), Queue: t, Sector: uint64(i) * 8}
		next[p]++
		if b.Index%4 == 3 && last[p] >= 0 {
			r := &reqs[last[p]]
			b.Request, b.Merge, b.Issue, b.Done = r.ID, trace.MergeBack, r.Issue, r.Complete
			r.Bios++
			r.BackMerges++
			r.Bytes += 4096
			bios = append(bios, b)
			continue
		}
		r := trace.Request{ID: uint64(len(reqs) + 1), Bytes: 4096, Cat: trace.CatRead, PID: pid, Cgroup: b.Cgroup,
			Queue: t, Get: t + 1000, Insert: t + 2000, Issue: t + 5000, Bios: 1, FirstBio: b.Index, Sector: b.Sector}
		r.Complete = r.Issue + trace.Time(50_000+rng.IntN(200_000))
		b.Request, b.Issue, b.Done = r.ID, r.Issue, r.Complete
		last[p] = len(reqs)
		reqs = append(reqs, r)
		bios = append(bios, b)
	}
	// A merged bio completes with its request.
	for i := range bios {
		b := &bios[i]
		r := &reqs[b.Request-1]
		b.Issue, b.Done = r.Issue, r.Complete
	}
	return bios, reqs
}

func synthSide(n, procs int, seed uint64) *Side {
	b, r := synth(n, procs, seed)
	return FromData(trace.Meta{Source: "synthetic"}, b, r, nil)
}

func cloneSide(s *Side) *Side {
	b := s.BioSlice()
	r := s.RequestSlice()
	m := s.Messages.Slice()
	return FromData(s.Meta, b, r, m)
}

func sortByDone(r []trace.Request) {
	slices.SortStableFunc(r, func(a, b trace.Request) int { return cmp.Compare(a.Complete, b.Complete) })
}
