package diff

import (
	"fmt"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// TestExpireReason: the reason numbers of expire messages read as
// fmt.Sscanf("%d") reads them, the shapes BFQ prints ("expire (2, ...")
// and others.
func TestExpireReason(t *testing.T) {
	for _, r := range []string{"0", "2", "4", "9", "12", "07", "", " 3", "+1", "-1", "3x", "x3", "123", "1_0", "٣"} {
		var want int
		_, err := fmt.Sscanf(r, "%d", &want)
		got, ok := expireReason(r)
		if ok != (err == nil) || (ok && got != want) {
			t.Errorf("expireReason(%q) = %d, %v; Sscanf gives %d, %v", r, got, ok, want, err)
		}
	}
}

// TestParseDecision: the decisions read from BFQ and CFQ messages as the
// kernel prints them (block/bfq-iosched.c, cfq-iosched.c of 4.x), with the
// queue named by the message's prefix; messages without a queue or a
// decision are none.
func TestParseDecision(t *testing.T) {
	for _, c := range []struct {
		text              string
		kind, queue, what string
	}{
		{"bfq1234S set_in_service_queue, cur-budget = 16384", DecisionSelect, "bfq1234S", "bfq1234S"},
		{"bfq77A expire (2, slow 0, num_disp 3, short 0)", DecisionExpire, "bfq77A", "reason 2"},
		{"bfq77S may_budget_timeout: wait_request 1 left 0 timeout 0", DecisionIdle, "bfq77S", "idle"},
		{"bfq77S may_budget_timeout: wait_request 0 left 0 timeout 0", DecisionIdle, "bfq77S", "no idle"},
		{"cfq301S set_active wl_class:0 wl_type:1", DecisionSelect, "cfq301S", "cfq301S"},
		{"cfq301S slice expired t=0", DecisionExpire, "cfq301S", "t=0"},
		{"cfq301S arm_idle: 8 group_idle: 0", DecisionIdle, "cfq301S", "idle"},
		{"bfqSHARED-S set_in_service_queue, cur-budget = 1", DecisionSelect, "bfqSHARED-S", "bfqSHARED-S"},
		{"bfq1234S dispatched 8 sectors", "", "", ""},
		{"bfq schedule dispatch", "", "", ""},
		{"cfq set_active wl_class:0", "", "", ""},
	} {
		m := Message{Time: 42, Text: c.text, Msg: trace.ParseMessage(c.text)}
		d, ok := parseDecision(&m)
		if isSelect(&m) != (ok && d.kind == DecisionSelect) {
			t.Errorf("%q: isSelect %v, decision %v %s", c.text, isSelect(&m), ok, d.kind)
		}
		if ok != (c.kind != "") {
			t.Errorf("%q: decision %v, want %v", c.text, ok, c.kind != "")
			continue
		}
		if ok && (d.t != 42 || d.kind != c.kind || d.queue != c.queue || d.what != c.what) {
			t.Errorf("%q: %+v, want %s %s %s", c.text, d, c.kind, c.queue, c.what)
		}
	}
}

// TestDecisionsOneSide: with scheduler messages on one side only, the
// decisions are not compared and each side's selects are counted as
// decisionsOf finds them, without decisionsOf.
func TestDecisionsOneSide(t *testing.T) {
	texts := []string{
		"bfq1234S set_in_service_queue, cur-budget = 16384",
		"bfq77A expire (2, slow 0, num_disp 3, short 0)",
		"bfq1234S set_in_service_queue, cur-budget = 1",
		"cfq301S set_active wl_class:0 wl_type:1",
		"bfq schedule dispatch",
		"not a scheduler's message",
	}
	withMsgs, without := &Side{}, &Side{}
	for i, x := range texts {
		withMsgs.Messages.Append(Message{Time: trace.Time(i), Text: x, Msg: trace.ParseMessage(x)})
	}
	without.Messages = MessageLogOf([]Message{{Time: 1, Text: "not a scheduler's message", Msg: trace.ParseMessage("not a scheduler's message")}})
	sel, _ := decisionsOf(withMsgs)
	if has := hasSchedMessages(withMsgs); !has || len(sel) != 3 || hasSchedMessages(without) {
		t.Fatalf("decisionsOf: %d selects, messages %v; want 3, true (and none without)", len(sel), has)
	}
	for _, c := range []struct{ real, pred *Side }{{withMsgs, without}, {without, withMsgs}, {without, without}} {
		d := compareDecisions(c.real, c.pred, Options{})
		rs, _ := decisionsOf(c.real)
		ps, _ := decisionsOf(c.pred)
		if d.Compared || d.Select.Real != len(rs) || d.Select.Predicted != len(ps) || d.Mismatches == nil || len(d.Mismatches) != 0 {
			t.Errorf("compareDecisions: %+v; want not compared, selects %d and %d", d, len(rs), len(ps))
		}
	}
}
