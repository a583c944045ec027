package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
)

// recordedSetup is what is known of the setup a capture was recorded under.
type recordedSetup struct {
	Scheduler string            // "" unknown
	Source    string            // where Scheduler came from: "--recorded-sched", the manifest's path, "messages", "no messages"
	Kernel    string            // kernel release when known
	Weights   map[uint64]int    // cgroup id -> BFQ weight (manifest)
	Tunables  map[string]string // iosched tunables (manifest)
	Manifest  bool              // a manifest was read
}

// detectRecorded works out the recording scheduler: --recorded-sched, else
// the capture's manifest (mctx: beside the capture, --manifest, or stored
// by convert; nil when there is none or --no-manifest), else the capture's
// scheduler messages (bfq and cfq log in their own forms; mq-deadline,
// kyber and none log nothing), else none when no request was inserted
// into a scheduler (allocatedNoneInserted).
func detectRecorded(mctx *captureContext, flag string, real *diff.Side) (recordedSetup, error) {
	var rs recordedSetup
	if mctx != nil {
		m := mctx.m
		rs.Manifest = true
		rs.Scheduler, rs.Source, rs.Kernel = normSched(m.Scheduler), mctx.path, m.Host.KernelRelease
		rs.Weights = m.Weights()
		rs.Tunables = mctx.dev.Tunables(m)
	}
	if rs.Scheduler == "" {
		if s := messagesSched(real); s != "" {
			rs.Scheduler, rs.Source = s, "messages"
		}
	}
	if rs.Scheduler == "" {
		if n := allocatedNoneInserted(real); n >= minNoElevator {
			rs.Scheduler, rs.Source = "none", fmt.Sprintf("no I events: %d requests allocated, none inserted into a scheduler", n)
		}
	}
	if flag != "" {
		if _, err := findSched(normSched(flag)); err != nil && normSched(flag) != "kyber" {
			return rs, usagef("invalid --recorded-sched %q: want none, mq-deadline, kyber, bfq or cfq", flag)
		}
		rs.Scheduler, rs.Source = normSched(flag), "--recorded-sched"
	}
	if rs.Scheduler == "" {
		rs.Source = "no messages"
	}
	if rs.Kernel == "" {
		rs.Kernel = real.Meta.Kernel
	}
	return rs, nil
}

// minNoElevator is how many allocated requests (G), none of them inserted
// (I), make detectRecorded infer that the capture went through no
// scheduler.
const minNoElevator = 100

// allocatedNoneInserted returns how many of real's requests were allocated
// (a G event), not counting those the flush machinery or passthrough
// takes, or 0 when any request was inserted into a scheduler (an I
// event). Every elevator traces the insertion of each request it takes
// (trace_block_rq_insert in dd_insert_request, bfq_insert_request,
// kyber_insert_requests, and in 4.19's __elv_add_request for CFQ); only
// PREFLUSH and FUA writes (blk_insert_flush) and passthrough bypass it,
// so they are not counted. Without an
// elevator, blk-mq issues a request directly (blk_mq_try_issue_directly)
// and inserts it, traced, only when it gets no budget or tag; G and I are
// in one blktrace action class (BLK_TC_QUEUE), so an action mask cannot
// keep the one and drop the other. So a capture of allocations without a
// single insertion was recorded under none. (The converse does not hold:
// a none capture of a device that ran out of budget has some I events.)
func allocatedNoneInserted(real *diff.Side) int {
	n := 0
	for _, r := range real.Requests() {
		if r.Insert.Valid() {
			return 0
		}
		if r.Get.Valid() && r.Cat&(trace.CatFlush|trace.CatFUA|trace.CatPC) == 0 {
			n++
		}
	}
	return n
}

func normSched(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "mq-deadline", "mqdeadline", "deadline", "mq_deadline":
		return "mq-deadline"
	}
	return s
}

// replayChanges lists, in words, what the replay changes against the
// recorded setup. An unknown recording scheduler counts as a change of
// scheduler when the replay's scheduler logs messages (bfq, cfq) and the
// capture has none: the capture cannot have been made under it with its
// messages on. Weights and tunables count when a manifest says what they
// were.
// unknownSchedulerChange starts the change replayChanges names when the
// recorded scheduler is unknown and the capture has no messages.
const unknownSchedulerChange = "scheduler unknown"

// knownChange reports whether changes (replayChanges) hold a change known
// to be one: not only a recorded scheduler that may as well have been the
// one replayed (a BFQ capture recorded without its messages). --work auto
// cycles the workload (timed work) only then: a validation replay must
// send the capture's bios, no more.
func knownChange(changes []string) bool {
	for _, c := range changes {
		if !strings.HasPrefix(c, unknownSchedulerChange) {
			return true
		}
	}
	return false
}

func replayChanges(rs recordedSetup, sched, kernel string, kernelGiven bool, weights map[uint64]int, sets map[string]string, realHasMsgs bool) []string {
	var ch []string
	switch {
	case rs.Scheduler != "" && rs.Scheduler != sched:
		ch = append(ch, fmt.Sprintf("scheduler %s -> %s", rs.Scheduler, sched))
	case rs.Scheduler == "" && !realHasMsgs && (sched == "bfq" || sched == "cfq"):
		ch = append(ch, fmt.Sprintf("%s (the capture has no scheduler messages) -> %s", unknownSchedulerChange, sched))
	}
	if kernelGiven && kernel != "" && !strings.HasPrefix(rs.Kernel, kernel) {
		from := rs.Kernel
		if from == "" {
			from = "unknown"
		}
		ch = append(ch, fmt.Sprintf("kernel %s -> %s", from, kernel))
	}
	sameSched := rs.Scheduler == sched
	if len(weights) > 0 {
		var kv []string
		changed := !sameSched
		for _, id := range slices.Sorted(maps.Keys(weights)) {
			kv = append(kv, fmt.Sprintf("%d=%d", id, weights[id]))
			if w, ok := rs.Weights[id]; rs.Manifest && sameSched && (!ok || w != weights[id]) {
				changed = true
			}
		}
		if changed {
			ch = append(ch, "weights "+strings.Join(kv, " "))
		}
	}
	if len(sets) > 0 {
		var kv []string
		changed := false
		for _, k := range slices.Sorted(maps.Keys(sets)) {
			if queueAttrs[k] || modelOptions[k] {
				continue
			}
			kv = append(kv, k+"="+sets[k])
			if v, ok := rs.Tunables[k]; rs.Manifest && sameSched && (!ok || !sameValue(v, sets[k])) {
				changed = true
			}
		}
		if changed {
			ch = append(ch, "tunables "+strings.Join(kv, " "))
		}
	}
	return ch
}

func sameValue(a, b string) bool {
	fa, ea := strconv.ParseFloat(a, 64)
	fb, eb := strconv.ParseFloat(b, 64)
	if ea == nil && eb == nil {
		return fa == fb
	}
	return a == b
}

// messagesSched returns the scheduler whose own debug messages the real
// side carries (BFQ's or CFQ's, parsed by trace.ParseMessage), "" for none.
func messagesSched(real *diff.Side) string {
	for i := range real.Messages.Len() {
		if s := real.Messages.At(i).Msg.Sched; s != "" {
			return s
		}
	}
	return ""
}

// schedMessages reports whether the real side carries a scheduler's own
// debug messages.
func schedMessages(real *diff.Side) bool { return messagesSched(real) != "" }

// whatIfOptions fills the diff options' recorded scheduler and changes for
// a replay, and says on stderr which mode the report is in.
func whatIfOptions(ios *IOStreams, opts *replayOptions, mctx *captureContext, real *diff.Side, sched, kernel string, weights map[uint64]int, sets map[string]string, do *diff.Options) error {
	rs, err := detectRecorded(mctx, opts.recordedSched, real)
	if err != nil {
		return err
	}
	do.RecordedScheduler = rs.Scheduler
	do.Changes = replayChanges(rs, sched, kernel, opts.kernel != "", weights, sets, schedMessages(real))
	rec := rs.Scheduler
	if rec == "" {
		rec = "unknown"
	}
	if len(do.Changes) > 0 {
		fmt.Fprintf(ios.ErrOut, "tracesched: what-if: recorded under %s (%s); %s\n", rec, rs.Source, strings.Join(do.Changes, "; "))
	} else {
		fmt.Fprintf(ios.ErrOut, "tracesched: validate: recorded under %s (%s)\n", rec, rs.Source)
	}
	return nil
}
