package diff

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// shiftPIDs returns a copy of s with every pid moved by d, as a second run
// of the workload has (same commands, other pids).
func shiftPIDs(s *Side, d uint32) *Side {
	bios := s.BioSlice()
	reqs := s.RequestSlice()
	for i := range bios {
		bios[i].PID += d
	}
	for i := range reqs {
		reqs[i].PID += d
		reqs[i].Comm = "fio"
	}
	return FromData(s.Meta, bios, reqs, nil)
}

// Issue 14 item 12: two captures sharing no (pid, index) printed 0 matched
// with tau 1.0000 and think-time 100 %. Nothing compared is reported as
// such: NaN, null in JSON, n/a in text.
func TestNoComparisonIsNotAgreement(t *testing.T) {
	real := synthSide(400, 3, 1)
	pred := shiftPIDs(synthSide(400, 3, 2), 1000)
	r := Compare(real, pred, Options{})
	if r.Identity.Matched != 0 || r.Compared() {
		t.Fatalf("matched %d, want 0", r.Identity.Matched)
	}
	if !math.IsNaN(r.DispatchOrder.KendallTau) || !math.IsNaN(r.ThinkTime.Agreement) {
		t.Errorf("tau %v, think-time agreement %v: want NaN (not compared)", r.DispatchOrder.KendallTau, r.ThinkTime.Agreement)
	}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m struct {
		DispatchOrder map[string]any `json:"dispatch_order"`
		ThinkTime     map[string]any `json:"think_time"`
	}
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for what, obj := range map[string]map[string]any{"dispatch_order.kendall_tau": m.DispatchOrder, "think_time.agreement": m.ThinkTime} {
		key := what[strings.IndexByte(what, '.')+1:]
		v, ok := obj[key]
		if !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", what, v, ok)
		}
	}
	buf.Reset()
	r.WriteText(&buf, -1)
	txt := buf.String()
	if !strings.Contains(txt, "no comparison") || strings.Contains(txt, "1.0000") || strings.Contains(txt, "100.0%") {
		t.Errorf("text report reads as agreement:\n%s", txt)
	}
	// A real comparison keeps numbers.
	r2 := Compare(real, cloneSide(real), Options{})
	var b2 bytes.Buffer
	r2.WriteJSON(&b2)
	if !strings.Contains(b2.String(), `"kendall_tau": 1,`) {
		t.Errorf("identical sides: kendall_tau not 1 in JSON")
	}
}

// The mapping pairs the processes of two runs by command and start order,
// and Remap renames them (and their cgroups) so that Compare lines the
// runs up.
func TestMapByCommandPairsRuns(t *testing.T) {
	real := synthSide(400, 3, 1)
	{
		reqs := real.RequestSlice()
		for i := range reqs {
			reqs[i].Comm = "fio"
		}
		real = FromData(real.Meta, real.BioSlice(), reqs, nil)
	}
	pred := shiftPIDs(real, 1000)
	pids := MapByCommand(real, pred)
	if len(pids) != 3 {
		t.Fatalf("%d processes paired, want 3: %v", len(pids), pids)
	}
	for p, r := range pids {
		if p != r+1000 {
			t.Errorf("predicted pid %d paired with real %d, want %d (same start order)", p, r, p-1000)
		}
	}
	cgs := MapCgroupsByProcess(real, pred, pids, nil)
	res := Compare(real, pred.Remap(pids, cgs), Options{})
	if res.Identity.Matched != real.NumBios() || res.DispatchOrder.KendallTau != 1 {
		t.Errorf("after mapping: matched %d of %d, tau %v; want all, 1", res.Identity.Matched, real.NumBios(), res.DispatchOrder.KendallTau)
	}
	if pred.BioAt(0).PID < 1000 {
		t.Errorf("Remap modified its receiver")
	}
}

// Issue 14 "also seen": "idle 168161/3439 (168154 differ)" held the
// kernel's full log (a may_budget_timeout check at every dispatch) against
// the model's idle arms. Sequences logged differently are not compared;
// logged alike (the model at log=all) they are.
func TestIdleDecisionsComparedLikeWithLike(t *testing.T) {
	var full, arms, fullPred []Message
	for i := 0; i < 40; i++ {
		w := "0"
		if i%4 == 3 {
			w = "1"
		}
		full = append(full, msg(trace.Time(i), "bfq11S may_budget_timeout: wait_request "+w+" left 0 timeout 0"))
		fullPred = append(fullPred, msg(trace.Time(i), "bfq11S may_budget_timeout: wait_request "+w+" left 0 timeout 0"))
		if i%2 == 1 {
			arms = append(arms, msg(trace.Time(i), "bfq11S may_budget_timeout: wait_request 1 left 0 timeout 0"))
		}
	}
	capture := trace.Meta{Source: "blktrace"}
	bfqReplay := trace.Meta{Source: "replay", Extra: map[string]string{"scheduler": "bfq"}}
	bfqReplayAll := trace.Meta{Source: "replay", Extra: map[string]string{"scheduler": "bfq", "set.log": "all"}}
	d := Compare(FromData(capture, nil, nil, full), FromData(bfqReplay, nil, nil, arms), Options{}).Decisions
	if !d.IdleUncompared || d.Idle.Real != 40 || d.Idle.Predicted != 20 || d.Idle.Compared != 0 || d.Idle.Mismatched != 0 {
		t.Errorf("full log against arms only: %+v, uncompared %v; want counts 40/20, nothing compared", d.Idle, d.IdleUncompared)
	}
	// A replay that armed the idle timer twice logs arms only all the
	// same (fx-bfq-2cg-w100-900: 834 kernel checks against 2 model arms).
	d = Compare(FromData(capture, nil, nil, full), FromData(bfqReplay, nil, nil, arms[:2]), Options{}).Decisions
	if !d.IdleUncompared || d.Idle.Compared != 0 {
		t.Errorf("full log against two arms: %+v, uncompared %v; want nothing compared", d.Idle, d.IdleUncompared)
	}
	// Sides without metadata: what they log is judged from the messages.
	d = Compare(FromData(trace.Meta{Source: "replay"}, nil, nil, full), FromData(trace.Meta{Source: "replay"}, nil, nil, arms), Options{}).Decisions
	if !d.IdleUncompared {
		t.Errorf("full log against arms only, no scheduler named: compared")
	}
	d = Compare(FromData(capture, nil, nil, full), FromData(bfqReplayAll, nil, nil, fullPred), Options{}).Decisions
	if d.IdleUncompared || d.Idle.Compared != 40 || d.Idle.Mismatched != 0 {
		t.Errorf("two full logs: %+v, uncompared %v; want 40 compared, none differing", d.Idle, d.IdleUncompared)
	}
}
