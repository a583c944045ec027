package replay_test

import (
	"strings"
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// TestReadaheadSplit: a readahead bio of 7680 sectors on a queue of
// max_sectors_kb 1280 (2560 sectors) is split by bio_split_to_limits
// (block/blk-merge.c: bio_submit_split splits off max_sectors, traces X,
// flags the split REQ_NOMERGE and resubmits the rest) into three
// requests, as fs-mqdl-2bufread shows at 0.003840 s: Q RA 1907200+7680,
// X, G +2560, X, G +2560, G +2560. The process sees one bio: it submits
// its next one (depth 1) only when all three parts completed, and a bio
// continuing it merges into the last part only (the first two are
// REQ_NOMERGE).
func TestReadaheadSplit(t *testing.T) {
	ra := trace.CatRead | trace.CatAhead
	recs := []replay.Record{
		{PID: 9, Sector: 1907200, Bytes: 7680 << 9, Cat: ra, Queue: 0, Issue: 10, Done: 1_000_000},
		{PID: 9, Sector: 1907200 + 7680, Bytes: 128 << 9, Cat: ra, Queue: 1_000_100, Issue: 1_000_200, Done: 1_100_000},
	}
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var firstQ2, lastC1 trace.Time
	res, err := replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &fixedDevice{lat: 500_000},
		Queue: replay.Queue{Depth: 4, MaxSectors: 2560}}, func(e *trace.Event) error {
		switch e.Action {
		case trace.ActionQueue, trace.ActionSplit, trace.ActionGetRQ:
			got = append(got, e.Action.String()+" "+itoa(uint32(e.Sector))+"+"+itoa(e.Bytes>>9))
		}
		if e.Action == trace.ActionQueue && e.Sector == 1907200+7680 {
			firstQ2 = e.Time
		}
		if e.Action == trace.ActionComplete && e.Sector < 1907200+7680 {
			lastC1 = max(lastC1, e.Time)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "Q 1907200+7680,X 1907200+2560,G 1907200+2560,X 1909760+2560,G 1909760+2560,G 1912320+2560,Q 1914880+128,G 1914880+128"
	if s := strings.Join(got, ","); s != want {
		t.Errorf("events\n %s\nwant\n %s", s, want)
	}
	if res.Requests != 4 || res.Bios != 2 {
		t.Errorf("%d requests, %d bios; want 4, 2", res.Requests, res.Bios)
	}
	if firstQ2 < lastC1 {
		t.Errorf("second bio queued at %v, before the split bio's last part completed at %v", firstQ2, lastC1)
	}
}
