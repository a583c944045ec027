package bfq

import (
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// Issue 14 item 3: `replay --sched bfq` on public/hadoop-node8 spun in
// setupCooperator following newBfqq round a cycle. The cycle came from a
// stable merge scheduled with the queue the bic was later redirected to:
// after a split of that queue, the queue was stably merged with itself
// (q.newBfqq = q). bic_set_bfqq (block/bfq-iosched.c) cancels such a
// stable merge, and bfq_setup_merge refuses a merge that closes a cycle.
func TestNoMergeCycle(t *testing.T) {
	h := newFakeHost(true, 1, 100*trace.Time(1000))
	s, err := New(h, opts("", nil))
	if err != nil {
		t.Fatal(err)
	}
	g := s.groupFor(1)
	a := s.newQueue(g, 10, true)
	a.procRefs = 1
	bq := s.newQueue(g, 11, true)
	bq.procRefs = 1
	b := &bic{pid: 11, cgroup: 1}
	b.q[1] = bq
	bq.bic = b
	b.stableMerge = a // scheduled at bq's creation: a was created just before

	// 1. A cooperator merge redirects b to a (bfq_merge_bfqqs ->
	//    bic_set_bfqq): the stable merge with a is cancelled.
	if n := s.setupMerge(bq, a); n != a {
		t.Fatalf("setupMerge(b's queue, a) = %v, want a", n)
	}
	s.mergeQueues(b, bq)
	if b.q[1] != a {
		t.Fatalf("bic not redirected to a")
	}
	if b.stableMerge != nil {
		t.Errorf("stable merge with the bic's own queue still scheduled")
	}
	// 2. A merge of a queue with itself, or one closing a cycle, is refused.
	if n := s.setupMerge(a, a); n != nil || a.newBfqq != nil {
		t.Errorf("setupMerge(a, a) = %v, a.newBfqq = %v: want both nil", n, a.newBfqq)
	}
	c := s.newQueue(g, 12, true)
	c.procRefs = 1
	if n := s.setupMerge(c, a); n != a {
		t.Fatalf("setupMerge(c, a) = %v, want a", n)
	}
	if n := s.setupMerge(a, c); n != nil || a.newBfqq != nil {
		t.Errorf("setupMerge(a, c) with c -> a = %v: want nil (a cycle)", n)
	}
	// Every chain ends.
	for _, q := range []*queue{a, bq, c} {
		n, steps := q, 0
		for n.newBfqq != nil && steps < 10 {
			n, steps = n.newBfqq, steps+1
		}
		if steps == 10 {
			t.Errorf("queue %d: newBfqq chain does not end", q.pid)
		}
	}
}
