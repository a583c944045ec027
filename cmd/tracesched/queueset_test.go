package main

import (
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// TestQueueMaxSegments: --set max_segments=N sets the queue's segment
// limit (queue/max_segments); a value that is not a whole number from 1
// to 65535 is a usage error, and without it the engine's default (0:
// BLK_MAX_SEGMENTS) applies.
func TestQueueMaxSegments(t *testing.T) {
	dev := trace.Dev(7 << 20)
	q, err := queueFor(map[string]string{"max_segments": "64"}, dev)
	if err != nil || q.MaxSegments != 64 {
		t.Fatalf("max_segments=64: queue %+v, error %v; want MaxSegments 64", q, err)
	}
	if q, err := queueFor(map[string]string{}, dev); err != nil || q.MaxSegments != 0 {
		t.Fatalf("no max_segments: queue %+v, error %v; want MaxSegments 0 (the default)", q, err)
	}
	for _, v := range []string{"0", "-1", "x", "70000"} {
		if _, err := queueFor(map[string]string{"max_segments": v}, dev); err == nil {
			t.Errorf("max_segments=%s accepted, want a usage error", v)
		}
	}
}
