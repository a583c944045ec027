package trace

import (
	"strconv"
	"testing"
	"time"
)

// Issue 14 item 3: a capture of D records without C (a `blktrace -a
// issue` capture, or lost completions) grew without bound and Close was
// quadratic. Issued requests beyond RebuildMaxInFlight are closed as never
// completed on the way, oldest first.
func TestRebuilderBoundsIssuedNeverCompleted(t *testing.T) {
	const n = 3 * RebuildMaxInFlight / 2
	var ids []uint64
	rb := NewRebuilder(func(r *Request) {
		if r.Flags&FlagIncomplete == 0 {
			t.Fatalf("request %d emitted complete", r.ID)
		}
		ids = append(ids, r.ID)
	}, nil)
	start := time.Now()
	for i := 0; i < n; i++ {
		e := Event{Time: Time(i) * 1000, Action: ActionIssue, Dev: 8 << 20, Sector: uint64(i) * 8, Bytes: 4096, Cat: CatRead, PID: 1}
		rb.Add(&e)
	}
	if got := len(ids); got != n-RebuildMaxInFlight {
		t.Errorf("%d requests closed before Close, want %d", got, n-RebuildMaxInFlight)
	}
	rb.Close()
	st := rb.Stats()
	if st.Incomplete != n || st.Abandoned != n-RebuildMaxInFlight || len(ids) != n {
		t.Errorf("incomplete %d abandoned %d emitted %d, want %d %d %d", st.Incomplete, st.Abandoned, len(ids), n, n-RebuildMaxInFlight, n)
	}
	for i, id := range ids {
		if id != uint64(i+1) {
			t.Fatalf("request %d emitted %d-th, want in issue order", id, i+1)
		}
	}
	// Quadratic removal took minutes at this size; linear takes
	// milliseconds. The bound is generous for a loaded CI machine.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("%d issued requests took %v", n, d)
	}
}

// An issued request older than RebuildInFlightTimeout is closed as never
// completed; a C that comes for it afterwards is unmatched, and requests
// completing out of order inside the timeout are unaffected.
func TestRebuilderInFlightTimeout(t *testing.T) {
	to := int64(RebuildInFlightTimeout)
	reqs, _, st := rbRun(t, `
0 D 8,0 0+8
10 D 8,0 8+8
20 D 8,0 16+8
30 C 8,0 8+8
`+itoa(to+15)+` D 8,0 24+8
`+itoa(to+16)+` C 8,0 0+8
`+itoa(to+17)+` C 8,0 24+8
`)
	// Sector 0 (issued at 0) times out at the D at to+15; sector 16 (issued
	// at 20) has not yet and is open at Close.
	if st.Abandoned != 1 || st.Incomplete != 2 || st.UnmatchedC != 1 {
		t.Errorf("abandoned %d incomplete %d unmatched C %d, want 1, 2 and 1", st.Abandoned, st.Incomplete, st.UnmatchedC)
	}
	complete := map[uint64]bool{}
	for _, r := range reqs {
		if r.Flags&FlagNoQueue == 0 || r.Issue != NoTime {
			complete[r.Sector] = r.Flags&FlagIncomplete == 0
		}
	}
	for sec, want := range map[uint64]bool{0: false, 8: true, 16: false, 24: true} {
		if complete[sec] != want {
			t.Errorf("sector %d completed %v, want %v", sec, complete[sec], want)
		}
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
