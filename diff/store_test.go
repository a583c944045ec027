package diff

import (
	"cmp"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// The compact tables give back exactly the bios and requests they were
// given, in (PID, Index) and ID order, the later of two equal bio keys
// dropped and counted, whatever order they came in.
func TestTablesRoundTrip(t *testing.T) {
	bios, reqs := synth(20_000, 7, 3)
	// Wide values where a trace allows them: the tables must not narrow.
	bios[5].Sector, bios[6].Cgroup, bios[7].Done = 1<<60, 1<<63|5, trace.NoTime
	reqs[9].Error, reqs[10].FromSector, reqs[11].Comm = -5, 1<<50, "kworker/u8:2"
	want := slices.Clone(bios)
	slices.SortStableFunc(want, func(a, b trace.Bio) int { return bioKeyCmp(&a, &b) })
	wantReqs := slices.Clone(reqs)
	slices.SortStableFunc(wantReqs, func(a, b trace.Request) int { return cmp.Compare(a.ID, b.ID) })
	// Shuffled, with a duplicate key after its first.
	r := rand.New(rand.NewPCG(1, 1))
	r.Shuffle(len(bios), func(i, j int) { bios[i], bios[j] = bios[j], bios[i] })
	r.Shuffle(len(reqs), func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
	dup := want[100]
	dup.Bytes++
	bios = append(bios, dup)
	s := FromData(trace.Meta{}, bios, reqs, nil)
	if s.Duplicates != 1 {
		t.Errorf("Duplicates %d, want 1", s.Duplicates)
	}
	if got := s.BioSlice(); !reflect.DeepEqual(got, want) {
		t.Errorf("bios differ from the input sorted by key")
	}
	if got := s.RequestSlice(); !reflect.DeepEqual(got, wantReqs) {
		t.Errorf("requests differ from the input sorted by ID")
	}
	// RequestAt (a column's At) reads what a pass with Requests (a
	// column's Values) reads.
	n := 0
	for i, r := range s.Requests() {
		if *r != s.RequestAt(i) {
			t.Fatalf("Requests: request %d is %+v, RequestAt gives %+v", i, *r, s.RequestAt(i))
		}
		if n++; n == 5000 {
			break
		}
	}
	if n != 5000 {
		t.Errorf("Requests stopped after %d, want a break at 5000", n)
	}
	if i := s.Bio(want[1234].PID, want[1234].Index); i != 1234 {
		t.Errorf("Bio(%d, %d) = %d, want 1234", want[1234].PID, want[1234].Index, i)
	}
	if i := s.Request(wantReqs[77].ID); i != 77 {
		t.Errorf("Request(%d) = %d, want 77", wantReqs[77].ID, i)
	}
	// Sparse IDs: found by search, absent ones -1.
	sparse := slices.Clone(wantReqs[:50])
	for i := range sparse {
		sparse[i].ID = uint64(10 * (i + 1))
	}
	sparse[3].Flags |= trace.FlagIncomplete
	sparse[8].Flags |= trace.FlagIncomplete | trace.FlagPartial
	s = FromData(trace.Meta{}, nil, sparse, nil)
	if s.Request(200) != 19 || s.Request(205) != -1 || s.Request(0) != -1 || s.Request(1000) != -1 {
		t.Errorf("sparse IDs: Request(200) = %d, Request(205) = %d", s.Request(200), s.Request(205))
	}
	if n := countFlag(sparse, trace.FlagIncomplete); n < 2 || s.FlaggedRequests(trace.FlagIncomplete) != n {
		t.Errorf("FlaggedRequests %d, want %d", s.FlaggedRequests(trace.FlagIncomplete), countFlag(sparse, trace.FlagIncomplete))
	}
}

func countFlag(reqs []trace.Request, f trace.RequestFlags) int {
	n := 0
	for i := range reqs {
		if reqs[i].Flags&f != 0 {
			n++
		}
	}
	return n
}
