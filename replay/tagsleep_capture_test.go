package replay

import "testing"

// fs-mqdl-untar's writeback kworker (pid 416) queues bio 4509720 + 8 at
// 1.256073 s with a request of 16 sectors on its plug; the bio cannot
// merge, sleeps for a tag (blk_mq_submit_bio: blk_mq_attempt_bio_merge,
// then blk_mq_get_new_requests), the sleep flushes the plug (the UT at
// 1.256074, sched_submit_work -> blk_flush_plug), and the bio gets its
// request at 1.256896 (G) into the same, still installed plug (the P right
// after; blk_add_rq_to_plug traces P for an empty plug), where the next
// 108 bios merge (M from 1.256902). The UT is the tag sleep's, between the
// bio's Q and its G: it does not end the bio's plug. Taken as its end, the
// replay inserted the bio's request at once and the next bios got requests
// of their own.
func TestTagSleepKeepsThePlug(t *testing.T) {
	recs := captureRecords(t, "recorded-fs", "fs-mqdl-untar")
	const kworker = 416
	found := false
	for i := range recs {
		r := &recs[i]
		if r.PID != kworker || r.Sector != 4509720 || r.Bytes != 4096 {
			continue
		}
		found = true
		if !r.Plugged || r.PlugEnd {
			t.Errorf("bio %d (4509720 + 8): Plugged %v PlugEnd %v, want plugged and not the plug's end", r.Index, r.Plugged, r.PlugEnd)
		}
		if n := &recs[i+1]; n.PID != kworker || n.Sector != 4509728 || !n.Plugged {
			t.Errorf("next bio %d:%d at %d plugged %v, want kworker's 4509728, plugged", n.PID, n.Index, n.Sector, n.Plugged)
		}
	}
	if !found {
		t.Fatal("capture: no kworker bio 4509720 + 8")
	}
}

// The same kworker at 1.229096 s: bio 4467296 + 96 is queued where its
// plugged request 4465616 + 1680 ends, sleeps for a tag (the UT flushes
// that request: its I at 1.229097 comes before the bio's G at 1.229805)
// and gets a request of its own, though the merge would have kept the
// request within max_sectors (1776 of 2560 sectors): the plug merge was
// refused for segments before the sleep (ll_back_merge_fn ->
// ll_new_hw_segment: nr_phys_segments over queue_max_segments, 128). The
// segment rule must see the request as it was at the bio's merge attempt,
// not as the I left it (gone), and raise the segments of the request's
// bios and the bio above 128 together, or the replay merges them (it did:
// a request of 1776 sectors).
func TestSegmentsRefusedBeforeTagSleep(t *testing.T) {
	recs := captureRecords(t, "recorded-fs", "fs-mqdl-untar")
	const kworker = 416
	for i := range recs {
		r := &recs[i]
		if r.PID != kworker || r.Sector != 4467296 || r.Bytes != 96<<9 {
			continue
		}
		segsOf := func(b *Record) int {
			if b.Segments == 0 {
				return minSegments(b.Bytes) // the fewest (Record.Segments)
			}
			return int(b.Segments)
		}
		segs, sector := segsOf(r), r.Sector
		for j := i - 1; j >= 0 && sector > 4465616; j-- {
			b := &recs[j]
			if b.PID != kworker {
				continue
			}
			if b.End() != sector {
				t.Fatalf("bio %d ends at %d, want the request's next bio's start %d", b.Index, b.End(), sector)
			}
			segs += segsOf(b)
			sector = b.Sector
		}
		if sector != 4465616 {
			t.Fatalf("request's bios start at %d, want 4465616", sector)
		}
		if segs <= defaultMaxSegments {
			t.Errorf("request 4465616 + 1680 and bio 4467296 + 96: %d segments, want over %d (the merge was refused)", segs, defaultMaxSegments)
		}
		return
	}
	t.Fatal("capture: no kworker bio 4467296 + 96")
}

// The kworker's sync (fs-mqdl-untar, at 1.716 and 1.727 s) writes the
// superblock at 3932160 with FUA twice, each queued once its own flush
// (FWS) had completed and nothing of its was in flight: step 3b, it waited
// for all its earlier bios (DepCount = its index). Its writeback earlier
// kept up to 6,490 bios in flight, so its depth-based DepCount is some
// 6,490 completions back; the first FUA write's step 3b count trimmed the
// completions kept before that, which skipped step 3b for the second (a
// DepCount of 39,172 instead of 45,662), and the replay issued it with
// its flush still in flight (two post-flushes shared one flush request: 8
// flush requests instead of the capture's 10).
func TestOrderedWritesAfterDeepWriteback(t *testing.T) {
	recs := captureRecords(t, "recorded-fs", "fs-mqdl-untar")
	const kworker = 416
	n := 0
	for i := range recs {
		r := &recs[i]
		if r.PID != kworker || r.Sector != 3932160 || !orderedWrite(r.Cat) {
			continue
		}
		n++
		if r.DepCount != int64(r.Index) {
			t.Errorf("FUA write %d at %.6f s: DepCount %d, want %d (all its earlier bios)", r.Index, r.Queue.Seconds(), r.DepCount, r.Index)
		}
	}
	if n != 2 {
		t.Fatalf("capture: %d FUA writes of the kworker at 3932160, want 2", n)
	}
}
