package trace_test

import (
	"path/filepath"
	"testing"

	"github.com/tracesched/tracesched/internal/fixture"
	"github.com/tracesched/tracesched/internal/shared"
	"github.com/tracesched/tracesched/trace"
)

// rebuildAll runs a capture through a Rebuilder, checking each request's
// invariants, and returns the requests, bio count and stats.
func rebuildAll(t *testing.T, name string) ([]trace.Request, uint64, trace.RebuildStats) {
	t.Helper()
	var reqs []trace.Request
	var bios uint64
	seen := map[[2]uint32]bool{}
	b := trace.NewRebuilder(func(r *trace.Request) {
		order := []trace.Time{r.Queue, r.Get, r.Insert, r.Issue, r.Complete}
		last := trace.NoTime
		for _, x := range order {
			if x == trace.NoTime {
				continue
			}
			if last != trace.NoTime && x < last {
				t.Errorf("request %d: times out of order: %v", r.ID, order)
				break
			}
			last = x
		}
		if r.Bios == 0 && r.Flags&(trace.FlagNoQueue|trace.FlagMergedAway) == 0 {
			t.Errorf("request %d has no bio and is not flagged", r.ID)
		}
		reqs = append(reqs, *r)
	}, func(x *trace.Bio) {
		k := [2]uint32{x.PID, x.Index}
		if seen[k] {
			t.Errorf("bio %d/%d emitted twice", x.PID, x.Index)
		}
		seen[k] = true
		bios++
	})
	fixture.Each(t, name, b.Add)
	b.Close()
	return reqs, bios, b.Stats()
}

func TestRebuildFixtures(t *testing.T) {
	for _, fx := range []string{"fx-bfq-2cg-w100-900", "fx-bfq-4seqread", "fx-mqdl-rw-nocg"} {
		t.Run(fx, func(t *testing.T) {
			reqs, bios, st := rebuildAll(t, filepath.Join(shared.Fixture(t, fx), fx))
			// These captures are complete: every Q has its G, I, D and C.
			if st.NoQueue+st.Incomplete+st.OrphanBios+st.UnmatchedMerges+st.UnmatchedOther != 0 {
				t.Errorf("unexpected unmatched events: %+v", st)
			}
			if uint64(len(reqs)) != bios || bios == 0 {
				t.Errorf("%d requests, %d bios; want equal and nonzero", len(reqs), bios)
			}
			for _, r := range reqs {
				if r.Cgroup == 0 && fx == "fx-bfq-2cg-w100-900" {
					t.Errorf("request %d has no cgroup", r.ID)
					break
				}
			}
		})
	}
}

// TestRebuildPublic checks the public captures' traps: remap chains
// (centos7-dm-remap), D/C-only traces (keks-discard), a capture missing a
// CPU file (hadoop-node8: completions on the missing CPU never come).
func TestRebuildPublic(t *testing.T) {
	t.Run("centos7-dm-remap", func(t *testing.T) {
		reqs, bios, st := rebuildAll(t, filepath.Join(shared.Path(t, "captures", "public", "centos7-dm-remap"), "sda"))
		// 113 Q on 8,0, each announced by A 8,2<-253,0 then A 8,0<-8,2;
		// 4 of them back-merge, so 109 requests.
		if len(reqs) != 109 || bios != 113 || st.Remaps != 226 || st.BackMerges != 4 {
			t.Fatalf("requests %d bios %d stats %+v", len(reqs), bios, st)
		}
		for _, r := range reqs {
			if r.Flags&trace.FlagRemapped == 0 || r.FromDev != trace.MkDev(253, 0) || r.Dev != trace.MkDev(8, 0) {
				t.Fatalf("request %+v: want remapped from 253,0 onto 8,0", r)
			}
		}
		// The first request: 8,0 24803160+160 <- (8,2) 24391512 <- (253,0) 20481880.
		if r := reqs[0]; r.Sector != 24803160 || r.FromSector != 20481880 {
			t.Errorf("first request %d <- %d, want 24803160 <- 20481880", r.Sector, r.FromSector)
		}
	})
	t.Run("keks-discard", func(t *testing.T) {
		reqs, bios, st := rebuildAll(t, filepath.Join(shared.Path(t, "captures", "public", "keks-discard"), "keks"))
		if bios != 0 || st.NoQueue != uint64(len(reqs)) {
			t.Fatalf("bios %d, requests %d, stats %+v: want every request FlagNoQueue", bios, len(reqs), st)
		}
		var d2c, discards int
		for _, r := range reqs {
			if r.Issue != trace.NoTime && r.Complete != trace.NoTime {
				d2c++
			}
			if r.Cat&trace.CatDiscard != 0 {
				discards++
			}
		}
		// Nearly every D finds its C: only those in flight at either end don't.
		if d2c < len(reqs)*9/10 || discards == 0 {
			t.Errorf("%d of %d requests have D and C, %d discards", d2c, len(reqs), discards)
		}
	})
	t.Run("hadoop-node8", func(t *testing.T) {
		if testing.Short() {
			t.Skip("large capture")
		}
		_, _, st := rebuildAll(t, filepath.Join(shared.Path(t, "captures", "public", "hadoop-node8"), "sdb"))
		if st.Splits == 0 || st.Requeues == 0 || st.UnmatchedOther != 0 {
			t.Errorf("stats %+v", st)
		}
		t.Logf("hadoop: %+v", st)
	})
}
