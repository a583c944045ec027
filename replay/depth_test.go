package replay_test

import (
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// limited is mq-deadline with a limit_depth hook allowing async writes 2
// tags in use, as bfq_limit_depth's shallow depth does.
type limited struct{ refusing }

func (limited) LimitDepth(now trace.Time, bio *replay.Bio) int {
	if bio.Cat.IsWrite() && bio.Cat&trace.CatSync == 0 {
		return 2
	}
	return 0
}

// TestLimitDepthSleeps: four async writes at once may hold only 2 tags:
// two sleep (blk_mq_get_tag with a shallow depth); a sync read arriving
// after them is not limited and gets a tag at once, ahead of the
// sleeping writes (the shallow depth lets it take the higher bits).
func TestLimitDepthSleeps(t *testing.T) {
	var recs []replay.Record
	for i := 0; i < 4; i++ {
		recs = append(recs, replay.Record{PID: uint32(10 + i), Sector: uint64(i) * 100_000, Bytes: 4096,
			Cat: trace.CatWrite, Queue: trace.Time(i)})
	}
	recs = append(recs, replay.Record{PID: 20, Sector: 1 << 30, Bytes: 4096, Cat: trace.CatRead, Queue: 10})
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	var readQ, readG trace.Time
	res, err := replay.Run(w, replay.Config{NewScheduler: func(h replay.Host) (replay.Scheduler, error) {
		s, err := newRefusing(h)
		return limited{s.(refusing)}, err
	}, Device: &fixedDevice{lat: 1_000_000}, Queue: replay.Queue{Depth: 8, NrRequests: 64}, Mode: replay.Open},
		func(e *trace.Event) error {
			if e.PID == 20 && e.Action == trace.ActionQueue {
				readQ = e.Time
			}
			if e.PID == 20 && e.Action == trace.ActionGetRQ {
				readG = e.Time
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sleeps != 2 || res.Requests != 5 {
		t.Errorf("%d sleeps, %d requests; want 2, 5", res.Sleeps, res.Requests)
	}
	if readG != readQ {
		t.Errorf("sync read got its request at %v, queued at %v: it waited behind limited writes", readG, readQ)
	}
}

// overLimit is a limit_depth hook that finds pid 10's async writes over
// their entity's request limit (bfq_limit_depth after
// bfqq_request_over_limit: shallow depth 1).
type overLimit struct{ refusing }

func (overLimit) LimitDepth(now trace.Time, bio *replay.Bio) int {
	if bio.PID == 10 && bio.Cat.IsWrite() && bio.Cat&trace.CatSync == 0 {
		return 1
	}
	return 0
}

// TestShallowDepthOne: since Linux 6.17 a shallow depth counts tags of
// the whole bitmap (lib/sbitmap.c __map_depth_with_shallow: depth 1 of 256
// is 64*1/256 = 0 rem 64 bits a word, plus one for word 0 alone), so a
// writer over its limit has bit 0 of word 0 and no other. A sync read on
// CPU 1 holds a tag first: a full-depth get takes the lowest free bit of
// its CPU's hint word, word 3 for CPU 1 in the model (tagMap.hint), so bit
// 0 stays free and the writer gets it at once (a count of tags in use
// would refuse it: 1 of 1). Its second and third writes sleep, with 254
// tags free, until the one before completes (fs-bfq-writeback: the flusher
// slept for a tag after "too many requests: allocated 2 limit 2 level
// 0"), where one bit a word (before 6.17) would let it hold 4.
func TestShallowDepthOne(t *testing.T) {
	recs := []replay.Record{{PID: 20, CPU: 1, Sector: 1 << 30, Bytes: 4096, Cat: trace.CatRead, Queue: 0}}
	for i := 0; i < 3; i++ {
		recs = append(recs, replay.Record{PID: 10, Sector: uint64(i) * 100_000, Bytes: 4096,
			Cat: trace.CatWrite, Queue: trace.Time(1 + i)})
	}
	res, gets := runLimited(t, recs, func(r refusing) replay.Scheduler { return overLimit{r} })
	if res.Sleeps != 2 || res.Requests != 4 {
		t.Errorf("%d sleeps, %d requests; want 2, 4", res.Sleeps, res.Requests)
	}
	if len(gets) != 3 || gets[0] != 1 || gets[1] < 1_000_001 || gets[2] < 2_000_001 {
		t.Errorf("pid 10 got its requests at %v; want 1 ns, then one a completion (1 ms) later each", gets)
	}
}

// earlyLimit limits pid 10's async writes to shallow depth 1 until 500 us.
type earlyLimit struct{ refusing }

func (earlyLimit) LimitDepth(now trace.Time, bio *replay.Bio) int {
	if bio.PID == 10 && now < 500_000 {
		return 1
	}
	return 0
}

// TestSleeperKeepsItsDepth: bfq_limit_depth runs once an allocation, and
// blk_mq_get_tag retries after each wake-up with the same
// data->shallow_depth. Pid 10's second write sleeps at 300 us with depth 1
// (bit 0 is its first write's); pid 20's read completing at 1 ms frees a
// tag, but not bit 0, so the write sleeps on until its first write
// completes at 1.3 ms, though a depth computed anew at 1 ms would be full.
func TestSleeperKeepsItsDepth(t *testing.T) {
	recs := []replay.Record{
		{PID: 20, CPU: 1, Sector: 1 << 30, Bytes: 4096, Cat: trace.CatRead, Queue: 0},
		{PID: 10, Sector: 0, Bytes: 4096, Cat: trace.CatWrite, Queue: 300_000},
		{PID: 10, Sector: 100_000, Bytes: 4096, Cat: trace.CatWrite, Queue: 300_001},
	}
	_, gets := runLimited(t, recs, func(r refusing) replay.Scheduler { return earlyLimit{r} })
	if len(gets) != 2 || gets[0] != 300_000 || gets[1] != 1_300_000 {
		t.Errorf("pid 10 got its requests at %v; want 300 us and 1.3 ms", gets)
	}
}

// runLimited replays recs open-loop on a 1 ms device through the refusing
// scheduler wrapped by wrap (a DepthLimiter), with 256 scheduler tags, and
// returns the result and when pid 10 got each of its requests.
func runLimited(t *testing.T, recs []replay.Record, wrap func(refusing) replay.Scheduler) (replay.Result, []trace.Time) {
	t.Helper()
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	var gets []trace.Time
	res, err := replay.Run(w, replay.Config{NewScheduler: func(h replay.Host) (replay.Scheduler, error) {
		s, err := newRefusing(h)
		return wrap(s.(refusing)), err
	}, Device: &fixedDevice{lat: 1_000_000}, Queue: replay.Queue{Depth: 8, NrRequests: 256}, Mode: replay.Open},
		func(e *trace.Event) error {
			if e.Action == trace.ActionGetRQ && e.PID == 10 {
				gets = append(gets, e.Time)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return res, gets
}
