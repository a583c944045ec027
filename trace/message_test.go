package trace

import "testing"

func TestParseMessage(t *testing.T) {
	tests := []struct {
		text string
		want Message
	}{
		{"bfq4058S select_queue: already in-service queue", Message{Sched: "bfq", PID: 4058, Sync: true, Body: "select_queue: already in-service queue"}},
		{"bfqSHARED-S get_request 00000000dde2ac83: bfqq 00000000c076dbd8, 5", Message{Sched: "bfq", PID: -1, Sync: true, Shared: true, Body: "get_request 00000000dde2ac83: bfqq 00000000c076dbd8, 5"}},
		{"bfq123A expire (3, slow 0, num_disp 1, short_ttime 1)", Message{Sched: "bfq", PID: 123, Body: "expire (3, slow 0, num_disp 1, short_ttime 1)"}},
		{"bfq dispatch requests: 2 busy queues", Message{Sched: "bfq", Body: "dispatch requests: 2 busy queues"}},
		// A queue just allocated, before BFQ sets its pid (6.18 capture).
		{"bfq0A new_ioprio 4 new_weight 40", Message{Sched: "bfq", Body: "new_ioprio 4 new_weight 40"}},
		{"cfq1234S  insert_request", Message{Sched: "cfq", PID: 1234, Sync: true, Body: "insert_request"}},
		{"cfq1234SN dispatch_insert", Message{Sched: "cfq", PID: 1234, Sync: true, NoIdle: true, Body: "dispatch_insert"}},
		{"cfq schedule dispatch", Message{Sched: "cfq", Body: "schedule dispatch"}},
		{"dm-0 resumed", Message{Body: "dm-0 resumed"}},
		{"bfqX nonsense", Message{Body: "bfqX nonsense"}},
		{"bfq", Message{Body: "bfq"}},
	}
	for _, tt := range tests {
		if got := ParseMessage(tt.text); got != tt.want {
			t.Errorf("ParseMessage(%q) = %+v, want %+v", tt.text, got, tt.want)
		}
	}
	if n := QueueName("bfq", -1, true); n != "bfqSHARED-S" {
		t.Errorf("QueueName shared = %q", n)
	}
	if n := (Message{Sched: "cfq", PID: 7, Sync: false}).QueueName(); n != "cfq7A" {
		t.Errorf("QueueName = %q", n)
	}
}
