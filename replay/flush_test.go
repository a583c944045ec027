package replay_test

import (
	"strings"
	"testing"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// jbd2's commit block: a PREFLUSH | FUA | SYNC | META write.
const commitCat = trace.CatFlush | trace.CatWrite | trace.CatFUA | trace.CatSync | trace.CatMeta

// TestFlushSequence: on a write-back cache without FUA, blk_flush_policy
// (block/blk-flush.c) gives a PREFLUSH|FUA write PREFLUSH, DATA and
// POSTFLUSH; blk_insert_flush strips REQ_PREFLUSH and REQ_FUA and adds
// REQ_SYNC, and blk_flush_complete_seq runs the steps: a REQ_OP_FLUSH
// request (blk_kick_flush, "FN") before the data, the data inserted at the
// head (I) and issued, another flush, then the restored request completes
// with zero bytes. This is the event sequence fs-mqdl-fsync-vs-seqread
// shows at 0.005448 s for jbd2's commit block: Q FWFSM, G FWFSM, D FN,
// C FN, I WSM, D WSM, C WSM, D FN, C FN, C WSM +0.
func TestFlushSequence(t *testing.T) {
	recs := []replay.Record{{PID: 7, Sector: 3932408, Bytes: 4096, Cat: commitCat, Queue: 0}}
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, mk := range []func(replay.Host) (replay.Scheduler, error){newMQDL, newNone} {
		var got []string
		res, err := replay.Run(w, replay.Config{NewScheduler: mk, Device: &serialDevice{lat: 100_000},
			Queue: replay.Queue{Depth: 4, WriteCache: replay.WriteBack}}, func(e *trace.Event) error {
			if e.Action != trace.ActionMessage {
				got = append(got, e.Action.String()+" "+e.Cat.RWBS(e.Bytes)+" "+itoa(e.Bytes>>9))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := "Q FWFSM 8,G FWFSM 8,D FN 0,C FN 0,I WSM 8,D WSM 8,C WSM 8,D FN 0,C FN 0,C WSM 0"
		if res.Scheduler == "none" {
			want = strings.Replace(want, "I WSM 8,", "", 1) // none logs no insert
		}
		if s := strings.Join(got, ","); s != want {
			t.Errorf("%s: events\n %s\nwant\n %s", res.Scheduler, s, want)
		}
		if res.Flushes != 2 || res.Requests != 3 {
			t.Errorf("%s: %d flushes, %d requests; want 2, 3", res.Scheduler, res.Flushes, res.Requests)
		}
	}
	// Write-through: blk_flush_policy has DATA only; the write is a plain
	// WSM request (REQ_FUA kept only where the device has FUA).
	res, err := replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &serialDevice{lat: 100_000},
		Queue: replay.Queue{Depth: 4, WriteCache: replay.WriteThrough}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Flushes != 0 || res.Requests != 1 {
		t.Errorf("write through: %d flushes, %d requests; want 0, 1", res.Flushes, res.Requests)
	}
}

func itoa(v uint32) string {
	if v == 0 {
		return "0"
	}
	var b []byte
	for ; v > 0; v /= 10 {
		b = append([]byte{byte('0' + v%10)}, b...)
	}
	return string(b)
}

// TestFlushesShared: three commit writes queued 1 us apart. blk_kick_flush
// issues a flush only when none is in flight (pending_idx == running_idx,
// C1) and no flush data phase is on the device (C2, within
// FLUSH_PENDING_TIMEOUT); every request pending when it goes shares it
// (flush_end_io walks the running list). Hand-run: F1 serves A's
// preflush; B and C wait (F1 in flight), then wait for A's data (C2); A's
// data completes, A's postflush joins them: F2 serves A post, B pre and C
// pre; B's and C's data run; B's postflush waits for C's data (C2); C's
// data completes: F3 serves both postflushes. 3 flushes, not 6.
func TestFlushesShared(t *testing.T) {
	var recs []replay.Record
	for i := 0; i < 3; i++ {
		recs = append(recs, replay.Record{PID: uint32(10 + i), Sector: uint64(1000 * (i + 1)), Bytes: 4096,
			Cat: commitCat, Queue: trace.Time(i * 1000)})
	}
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &fixedDevice{lat: 100_000},
		Queue: replay.Queue{Depth: 8, WriteCache: replay.WriteBack}, Mode: replay.Open}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Flushes != 3 || res.Requests != 6 {
		t.Errorf("%d flushes, %d requests; want 3, 6", res.Flushes, res.Requests)
	}
	// With FUA on the device there is no postflush (blk_flush_policy): F1
	// for A, F2 for B and C (pending behind F1, then behind A's data).
	res, err = replay.Run(w, replay.Config{NewScheduler: newMQDL, Device: &fixedDevice{lat: 100_000},
		Queue: replay.Queue{Depth: 8, WriteCache: replay.WriteBack, FUA: true}, Mode: replay.Open}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Flushes != 2 || res.Requests != 5 {
		t.Errorf("FUA: %d flushes, %d requests; want 2, 5", res.Flushes, res.Requests)
	}
}

// finishRecorder is mq-deadline with the time of each Completed call.
type finishRecorder struct {
	replay.Scheduler
	at map[uint64]trace.Time
}

func (f *finishRecorder) InsertAtHead(now trace.Time, rq *replay.Request) {
	f.Scheduler.(replay.AtHeadInserter).InsertAtHead(now, rq)
}

func (f *finishRecorder) Completed(now trace.Time, rq *replay.Request) {
	f.at[rq.ID] = now
	f.Scheduler.Completed(now, rq)
}

// TestFlushDataFinishedAtItsCompletion: a blk-mq elevator is told a flush
// sequence's data phase is finished when the data completes, before the
// postflush: __blk_mq_end_request calls blk_mq_finish_request (the
// elevator's finish_request, once: RQF_USE_SCHED is cleared) before the
// end_io that moves the sequence on. fs-bfq-fsync-vs-seqread shows BFQ's
// put_queue for jbd2's commit block at its data's C (1.000635 s), 0.3 ms
// before the postflush completes. Serial 100 us device: preflush 0-100,
// data 100-200, postflush 200-300.
func TestFlushDataFinishedAtItsCompletion(t *testing.T) {
	recs := []replay.Record{{PID: 7, Sector: 3932408, Bytes: 4096, Cat: commitCat, Queue: 0}}
	w, err := replay.NewWorkloadFromRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	rec := &finishRecorder{at: map[uint64]trace.Time{}}
	_, err = replay.Run(w, replay.Config{NewScheduler: func(h replay.Host) (replay.Scheduler, error) {
		s, err := newMQDL(h)
		rec.Scheduler = s
		return rec, err
	}, Device: &serialDevice{lat: 100_000}, Queue: replay.Queue{Depth: 4, WriteCache: replay.WriteBack}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.at) != 1 {
		t.Fatalf("Completed called for %d requests, want the commit block's once", len(rec.at))
	}
	for id, at := range rec.at {
		if at != 200_000 {
			t.Errorf("request %d finished at %v, want its data's completion at 200 us", id, at)
		}
	}
}
