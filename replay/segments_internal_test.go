package replay

import "testing"

// TestGrowSegments: the bios of a request that refused a bio for
// segments get at least the segments wanted (MaxSegments+1 less the
// refused bio's, in the Collector). A one-page bio and two 4-page bios
// (3 segments at the least, 9 at the most) that must have 7: the 4
// missing are shared out over the room each has (0, 3, 3), 2 and 2. With
// 11 wanted, more than their pages allow, each gets a segment per page.
func TestGrowSegments(t *testing.T) {
	mk := func() []*collectQ {
		var qs []*collectQ
		for _, b := range []uint32{4096, 16384, 16384} {
			qs = append(qs, &collectQ{rec: storedRecord{bytes: b, segs: uint16(minSegments(b))}})
		}
		return qs
	}
	segs := func(qs []*collectQ) []uint16 {
		var s []uint16
		for _, q := range qs {
			s = append(s, q.rec.segs)
		}
		return s
	}
	qs := mk()
	growSegments(qs, 7)
	if got := segs(qs); got[0] != 1 || got[1] != 3 || got[2] != 3 {
		t.Errorf("segments %v, want [1 3 3]", got)
	}
	qs = mk()
	growSegments(qs, 11)
	if got := segs(qs); got[0] != 1 || got[1] != 4 || got[2] != 4 {
		t.Errorf("segments %v, want [1 4 4] (one a page)", got)
	}
	qs = mk()
	growSegments(qs, 2)
	if got := segs(qs); got[0] != 1 || got[1] != 1 || got[2] != 1 {
		t.Errorf("segments %v, want [1 1 1] (already enough)", got)
	}
	qs = mk()
	growSegments(qs, 6) // 3 missing over room 0, 3, 3: 1.5 each, the earlier bio takes the odd one
	if got := segs(qs); got[0] != 1 || got[1] != 3 || got[2] != 2 {
		t.Errorf("segments %v, want [1 3 2]", got)
	}
}
