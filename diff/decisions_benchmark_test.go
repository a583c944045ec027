package diff

import (
	"fmt"
	"testing"

	"github.com/tracesched/tracesched/trace"
)

// BenchmarkDecisionsOneSide compares the decisions of a capture without
// scheduler messages and a BFQ replay's 700 k messages (a select, an
// expiry, an idle decision and a dispatch in turn, over 64 queues), as a
// replay of a capture recorded under an unknown scheduler does: only the
// selects are counted.
func BenchmarkDecisionsOneSide(b *testing.B) {
	pred := &Side{}
	bodies := []string{"set_in_service_queue, cur-budget = 16384", "expire (2, slow 0, num_disp 3, short 0)",
		"may_budget_timeout: wait_request 1 left 0 timeout 0", "dispatched 8 sectors"}
	for i := range 700_000 {
		x := fmt.Sprintf("bfq%dS %s", 1000+i%64, bodies[i%len(bodies)])
		pred.Messages.Append(Message{Time: trace.Time(i), Text: x, Msg: trace.ParseMessage(x)})
	}
	real := &Side{}
	b.ReportAllocs()
	for b.Loop() {
		if d := compareDecisions(real, pred, Options{}); d.Select.Predicted != 175_000 {
			b.Fatalf("%d selects", d.Select.Predicted)
		}
	}
}
