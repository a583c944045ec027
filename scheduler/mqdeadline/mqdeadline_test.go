package mqdeadline

import (
	"strings"
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

type host struct{}

func (host) ArmTimer(int, trace.Time)               {}
func (host) CancelTimer(int)                        {}
func (host) Kick()                                  {}
func (host) Log(trace.Time, uint32, uint64, string) {}
func (host) InDriver() int                          { return 0 }
func (host) Queue() replay.Queue                    { return replay.Queue{Depth: 32, NrRequests: 256, MaxSectors: 2560} }

const ms = trace.Time(1_000_000)

func newDD(t *testing.T, set map[string]string) *Scheduler {
	t.Helper()
	s, err := New(host{}, replay.Options{Set: set})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var ids uint64

func rq(sector uint64, write bool) *replay.Request {
	ids++
	c := trace.CatRead | trace.CatSync
	if write {
		c = trace.CatWrite | trace.CatSync
	}
	return &replay.Request{ID: ids, Sector: sector, Bytes: 4096, Cat: c}
}

func sectors(s *Scheduler, now trace.Time, n int) []uint64 {
	var out []uint64
	for i := 0; i < n && s.HasWork(now); i++ {
		r := s.Dispatch(now)
		if r == nil {
			break
		}
		out = append(out, r.Sector)
	}
	return out
}

func eq(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSectorOrder: within a batch, requests go in ascending sector order
// from the end of the last one dispatched, with no wrap-around: the
// request below it waits for a new batch, which starts at the FIFO head.
func TestSectorOrder(t *testing.T) {
	s := newDD(t, nil)
	for _, sec := range []uint64{500, 100, 300} {
		s.Insert(0, rq(sec, false))
	}
	if got := sectors(s, 0, 10); !eq(got, []uint64{100, 300, 500}) {
		t.Fatalf("order %v, want [100 300 500]", got)
	}
	// latest_pos is now 508: 50 is behind, 900 ahead.
	s.Insert(ms, rq(50, false))
	s.Insert(ms, rq(900, false))
	if got := sectors(s, ms, 10); !eq(got, []uint64{900, 50}) {
		t.Fatalf("order %v, want [900 50]", got)
	}
}

// TestBatchingAndWritesStarved: 80 reads and one write queued together:
// reads go in batches of fifo_batch (16); the write waits until reads have
// been preferred writes_starved (2) times at a batch start, so it is the
// 49th request (the first batch continues from the initial position and
// does not count).
func TestBatchingAndWritesStarved(t *testing.T) {
	for _, c := range []struct {
		set  map[string]string
		want int
	}{
		{nil, 48},
		{map[string]string{"writes_starved": "0"}, 16},
		{map[string]string{"fifo_batch": "8", "writes_starved": "1"}, 16},
	} {
		s := newDD(t, c.set)
		s.Insert(0, rq(1<<30, true))
		for i := 0; i < 80; i++ {
			s.Insert(0, rq(uint64(1000+i*8), false))
		}
		got := sectors(s, 0, 100)
		pos := -1
		for i, sec := range got {
			if sec == 1<<30 {
				pos = i
			}
		}
		if len(got) != 81 || pos != c.want {
			t.Errorf("%v: write dispatched at %d of %d, want %d", c.set, pos, len(got), c.want)
		}
		for i := 1; i < pos; i++ {
			if got[i] < got[i-1] {
				t.Errorf("%v: reads out of sector order at %d: %v", c.set, i, got[:pos])
				break
			}
		}
	}
}

// TestFifoExpiry: with fifo_batch 1 every dispatch starts a batch; the
// sector successor wins until the FIFO head has waited read_expire (500 ms
// = 125 jiffies at HZ 250), then the FIFO head goes first.
func TestFifoExpiry(t *testing.T) {
	for _, c := range []struct {
		at   trace.Time
		want uint64
	}{
		{100 * ms, 5000}, // B not expired: continue in sector order
		{499 * ms, 5000}, // jiffy 124 < 125
		{500 * ms, 10},   // jiffy 125: expired
		{600 * ms, 10},
	} {
		s := newDD(t, map[string]string{"fifo_batch": "1"})
		s.Insert(0, rq(1000, false))
		if r := s.Dispatch(0); r.Sector != 1000 {
			t.Fatal(r.Sector)
		}
		s.Insert(0, rq(10, false))    // B: behind latest_pos, oldest
		s.Insert(ms, rq(5000, false)) // C: ahead
		if got := s.Dispatch(c.at); got.Sector != c.want {
			t.Errorf("at %v: dispatched %d, want %d", c.at, got.Sector, c.want)
		}
	}
	// read_expire is in ms in sysfs.
	s := newDD(t, map[string]string{"read_expire": "100", "fifo_batch": "1"})
	s.Insert(0, rq(1000, false))
	s.Dispatch(0)
	s.Insert(0, rq(10, false))
	s.Insert(ms, rq(5000, false))
	if got := s.Dispatch(100 * ms); got.Sector != 10 {
		t.Errorf("read_expire=100: at 100 ms dispatched %d, want the expired 10", got.Sector)
	}
}

// TestMergesHooks: front-merge lookup by exact sector and direction,
// repositioning after a front merge, front_merges=0, and a request merge
// that hands next's earlier expiry to the surviving request.
func TestMergesHooks(t *testing.T) {
	s := newDD(t, nil)
	a := rq(100, false)
	s.Insert(0, a)
	s.Insert(0, rq(50, false))
	bio := &replay.Bio{Sector: 92, Bytes: 4096, Cat: trace.CatRead}
	if got := s.RequestMerge(0, bio); got != a {
		t.Fatalf("front merge candidate %v, want the request at 100", got)
	}
	if got := s.RequestMerge(0, &replay.Bio{Sector: 92, Bytes: 4096, Cat: trace.CatWrite}); got != nil {
		t.Fatalf("a write found a read to merge with")
	}
	a.Sector, a.Bytes = 92, 8192
	s.RequestMerged(0, a, replay.FrontMerge)
	if got := sectors(s, 0, 5); !eq(got, []uint64{50, 92}) {
		t.Fatalf("after front merge: %v, want [50 92]", got)
	}
	off := newDD(t, map[string]string{"front_merges": "0"})
	off.Insert(0, rq(100, false))
	if off.RequestMerge(0, bio) != nil {
		t.Fatalf("front_merges=0 still front-merges")
	}
	// RequestsMerged: next's earlier expiry passes to rq.
	s = newDD(t, map[string]string{"fifo_batch": "1"})
	first := rq(9000, false)
	s.Insert(0, first)
	s.Dispatch(0) // latest_pos 9008
	next := rq(208, false)
	s.Insert(0, next)
	r := rq(200, false)
	s.Insert(200*ms, r)
	s.Insert(200*ms, rq(9100, false))
	r.Bytes += next.Bytes
	s.RequestsMerged(200*ms, r, next)
	if got := s.Dispatch(600 * ms); got != r {
		t.Fatalf("merged request did not inherit next's expiry: got sector %d", got.Sector)
	}
}

func TestOptions(t *testing.T) {
	_, err := New(host{}, replay.Options{Set: map[string]string{"slice_idle": "0"}})
	if err == nil || !strings.Contains(err.Error(), "read_expire") || !strings.Contains(err.Error(), "fifo_batch") {
		t.Fatalf("unknown attribute: error %v, want one listing the valid names", err)
	}
	if _, err := New(host{}, replay.Options{Set: map[string]string{"fifo_batch": "x"}}); err == nil {
		t.Fatal("non-integer accepted")
	}
	s := newDD(t, map[string]string{"write_expire": "1000", "writes_starved": "4"})
	if s.expire[dirWrite] != 250 || s.expire[dirRead] != 125 || s.Tunables().WritesStarved != 4 {
		t.Fatalf("expire %v, tunables %+v", s.expire, s.Tunables())
	}
	if d := Defaults(256); d.AsyncDepth != 256 || d.FifoBatch != 16 || d.PrioAgingExpireMs != 10000 {
		t.Fatalf("defaults %+v", d)
	}
}

// TestLatestPosIsRequestStart: after a request is dispatched, the batch
// goes on from its start sector, not its end. block/mq-deadline.c (6.18)
// keeps latest_pos[data_dir] = blk_rq_pos(rq) in dd_start_request (called
// by __dd_dispatch_request), and deadline_next_request returns
// deadline_from_pos(per_prio, data_dir, latest_pos): the first request
// with blk_rq_pos(rq) >= pos. So a second request at the same sector (a
// journal block rewritten, an fsync's metadata) is next, before one
// further up. Keeping the end (the model before) skipped it to 200.
func TestLatestPosIsRequestStart(t *testing.T) {
	s := newDD(t, nil)
	a, b, c := rq(100, true), rq(100, true), rq(200, true)
	for _, r := range []*replay.Request{a, b, c} {
		s.Insert(0, r)
	}
	var got []uint64
	for s.HasWork(0) {
		r := s.Dispatch(0)
		got = append(got, r.Sector)
		if len(got) == 1 && r != a {
			t.Fatalf("first dispatch %d, want the FIFO head (the sorted first) a", r.ID)
		}
		if len(got) == 2 && r != b {
			t.Fatalf("second dispatch is request %d at %d, want b at 100 (deadline_from_pos(latest_pos = 100))", r.ID, r.Sector)
		}
	}
	if !eq(got, []uint64{100, 100, 200}) {
		t.Fatalf("order %v, want [100 100 200]", got)
	}
}
