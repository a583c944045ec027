package cfq

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Feature is one historical behaviour of CFQ that a --feature switch flips.
type Feature struct {
	Name    string
	Doc     string
	Kernels map[string]bool // value of the feature in each --kernel preset
}

// Kernel presets (--kernel). 4.19 is the default.
const (
	Kernel413 = "4.13"
	Kernel419 = "4.19"
)

// Feature names.
const (
	// FeatureGroupIdleArm is Ritesh Harjani's fix "cfq: Give a chance for
	// arming slice idle timer in case of group_idle": cfq_arm_slice_timer
	// returns early on a non-rotational NCQ queue only when group_idle is 0.
	// Without it (4.13) no idle timer is ever armed on such a queue, so
	// groups alternate request by request and weights are ignored.
	FeatureGroupIdleArm = "group_idle_arm"
	// FeatureRepositionTime is Gui Jianfeng's 2011 proposal (not merged):
	// cfq_choose_wl_type picks the workload tree whose first queue was
	// (re)positioned on its tree longest ago (reposition_time) instead of
	// the one with the lowest rb_key.
	FeatureRepositionTime = "reposition_time"
	// FeatureLogRequests is a model switch, not a kernel behaviour: also
	// log CFQ's per-request lines (insert_request, dispatch_insert,
	// activate rq, complete rqnoidle), which cost time on big replays.
	FeatureLogRequests = "log_requests"
)

// Features lists the behaviour switches, with their value in each preset.
func Features() []Feature {
	return []Feature{
		{Name: FeatureGroupIdleArm, Doc: "arm the idle timer for group_idle on non-rotational NCQ queues (Ritesh Harjani, cfq_arm_slice_timer)",
			Kernels: map[string]bool{Kernel413: false, Kernel419: true}},
		{Name: FeatureRepositionTime, Doc: "choose the workload by queue reposition_time, not rb_key (Gui Jianfeng 2011, unmerged)",
			Kernels: map[string]bool{Kernel413: false, Kernel419: false}},
		{Name: FeatureLogRequests, Doc: "log per-request lines too (model output switch)",
			Kernels: map[string]bool{Kernel413: false, Kernel419: false}},
	}
}

// tunables holds the sysfs attributes of queue/iosched/, in ns where
// they are times (the kernel's cfq_data fields).
type tunables struct {
	quantum         int      // cfq_quantum, requests
	fifoExpire      [2]int64 // cfq_fifo_expire[async, sync], ns
	backMax         int64    // cfq_back_max, KiB
	backPenalty     int64    // cfq_back_penalty, factor
	slice           [2]int64 // cfq_slice[async, sync], ns
	sliceAsyncRq    int      // cfq_slice_async_rq, requests
	sliceIdle       int64    // cfq_slice_idle, ns
	groupIdle       int64    // cfq_group_idle, ns
	latency         bool     // cfq_latency (low_latency)
	targetLatency   int64    // cfq_target_latency, ns
	sliceIdleSetter bool     // slice_idle was set explicitly
}

func defaultTunables() tunables {
	return tunables{
		quantum:       8,
		fifoExpire:    [2]int64{int64(250 * time.Millisecond), int64(125 * time.Millisecond)},
		backMax:       16 * 1024,
		backPenalty:   2,
		slice:         [2]int64{int64(40 * time.Millisecond), int64(100 * time.Millisecond)},
		sliceAsyncRq:  2,
		sliceIdle:     int64(8 * time.Millisecond),
		groupIdle:     int64(8 * time.Millisecond),
		latency:       true,
		targetLatency: int64(300 * time.Millisecond),
	}
}

// set applies one sysfs attribute as 4.19's STORE_FUNCTION does: plain
// time attributes in ms, _us ones in µs, values below the minimum clamped.
func (t *tunables) set(k, v string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("cfq: %s: bad value %q", k, v)
	}
	ms := func(min int64) int64 { return max(n, min) * int64(time.Millisecond) }
	us := func(min int64) int64 { return max(n, min) * int64(time.Microsecond) }
	switch k {
	case "quantum":
		t.quantum = int(max(n, 1))
	case "fifo_expire_sync":
		t.fifoExpire[1] = ms(1)
	case "fifo_expire_async":
		t.fifoExpire[0] = ms(1)
	case "back_seek_max":
		t.backMax = n
	case "back_seek_penalty":
		t.backPenalty = max(n, 1)
	case "slice_sync":
		t.slice[1] = ms(1)
	case "slice_sync_us":
		t.slice[1] = us(1)
	case "slice_async":
		t.slice[0] = ms(1)
	case "slice_async_us":
		t.slice[0] = us(1)
	case "slice_async_rq":
		t.sliceAsyncRq = int(max(n, 1))
	case "slice_idle":
		t.sliceIdle, t.sliceIdleSetter = ms(0), true
	case "slice_idle_us":
		t.sliceIdle, t.sliceIdleSetter = us(0), true
	case "group_idle":
		t.groupIdle = ms(0)
	case "group_idle_us":
		t.groupIdle = us(0)
	case "low_latency":
		t.latency = min(n, 1) == 1
	case "target_latency":
		t.targetLatency = ms(1)
	case "target_latency_us":
		t.targetLatency = us(1)
	default:
		return fmt.Errorf("cfq: unknown attribute %q", k)
	}
	return nil
}

// Attributes returns the sysfs attributes as 4.19 shows them (ms values
// truncated), sorted by name.
func (s *Scheduler) Attributes() map[string]string {
	t := &s.t
	ms := func(v int64) string { return strconv.FormatInt(v/int64(time.Millisecond), 10) }
	us := func(v int64) string { return strconv.FormatInt(v/int64(time.Microsecond), 10) }
	b := 0
	if t.latency {
		b = 1
	}
	return map[string]string{
		"quantum": strconv.Itoa(t.quantum), "fifo_expire_sync": ms(t.fifoExpire[1]), "fifo_expire_async": ms(t.fifoExpire[0]),
		"back_seek_max": strconv.FormatInt(t.backMax, 10), "back_seek_penalty": strconv.FormatInt(t.backPenalty, 10),
		"slice_sync": ms(t.slice[1]), "slice_sync_us": us(t.slice[1]), "slice_async": ms(t.slice[0]), "slice_async_us": us(t.slice[0]),
		"slice_async_rq": strconv.Itoa(t.sliceAsyncRq), "slice_idle": ms(t.sliceIdle), "slice_idle_us": us(t.sliceIdle),
		"group_idle": ms(t.groupIdle), "group_idle_us": us(t.groupIdle), "low_latency": strconv.Itoa(b),
		"target_latency": ms(t.targetLatency), "target_latency_us": us(t.targetLatency),
	}
}

// extension keys accepted in Options.Set besides the sysfs attributes:
//
//	blkio.weight:<path>       cgroup weight by path (10..1000)
//	blkio.leaf_weight:<path>  cgroup leaf weight by path ("/" is the root)
//	ioprio:<pid>              I/O priority of a process: "be/4", "rt/0", "idle"
func sortedSetKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// parseIoprio parses "be/4", "rt/0", "idle" into a class and level.
func parseIoprio(v string) (int, int, error) {
	c, l, _ := strings.Cut(strings.ToLower(strings.TrimSpace(v)), "/")
	level := 4
	if l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 || n > 7 {
			return 0, 0, fmt.Errorf("bad ioprio level %q", v)
		}
		level = n
	}
	switch c {
	case "be", "best-effort":
		return classBE, level, nil
	case "rt", "realtime":
		return classRT, level, nil
	case "idle":
		return classIdle, 7, nil
	}
	return 0, 0, fmt.Errorf("bad ioprio class %q", v)
}
