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
