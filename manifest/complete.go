package manifest

import (
	"fmt"
	"math"
	"strconv"
)

// Completeness is the check of a trace's request counts against the
// kernel's own counters over the tracing window (the rig's rule, kept so
// that its manifests and these compare):
//
//   - per cgroup with BFQ counters (cgroup v1 blkio.bfq.io_serviced, +1 per
//     request handed to bfq_insert_request(), before BFQ tries to merge it
//     into a queued request): the trace's D events carrying the cgroup's id
//     against the read+write delta minus the request-into-request merges the
//     trace shows (M + F - (Q + X - G), floored at 0);
//   - per cgroup with cgroup v2 io.stat (rios+wios+dios: +1 per bio that
//     enters blk_cgroup_bio_start(), split pieces included): the trace's
//     Q + X events of the cgroup;
//   - per device (/sys/block/DEV/stat read+write+discard ios, +1 per
//     completed request): the trace's C events of data requests, minus one
//     per PREFLUSH/FUA write with data (its data step completes twice).
//
// A count passes within Tolerance (relative) or Slack requests, for I/O at
// the edges of the tracing window. Lost events fail the check.
type Completeness struct {
	TraceComplete *bool         `json:"trace_complete"`
	Rule          string        `json:"rule"`
	Checks        int           `json:"checks"`
	PerCgroup     []CgroupCheck `json:"per_cgroup"`
	Device        *DeviceCheck  `json:"device"`
	Problems      []string      `json:"problems"`
	Notes         []string      `json:"notes"`
}

// CgroupCheck is one cgroup's line of the check.
type CgroupCheck struct {
	Path          string   `json:"path"`
	ID            uint64   `json:"cgroup_id"`
	TraceD        int64    `json:"trace_D"`
	TraceC        int64    `json:"trace_C"`
	TraceI        int64    `json:"trace_I"`
	RequestMerges int64    `json:"trace_request_merges"`
	Reference     string   `json:"reference"`
	Kernel        *int64   `json:"kernel_io_serviced"`
	Expected      *int64   `json:"expected_D,omitempty"`
	Traced        *int64   `json:"trace_counted,omitempty"` // what was compared with Expected
	Diff          *int64   `json:"diff,omitempty"`
	DiffPct       *float64 `json:"diff_pct,omitempty"`
	OK            *bool    `json:"ok,omitempty"`
	Note          string   `json:"note,omitempty"`
}

// DeviceCheck is the device's line of the check.
type DeviceCheck struct {
	Reference      string           `json:"reference"`
	TraceRequests  int64            `json:"trace_requests"`
	KernelIOs      int64            `json:"kernel_ios"`
	Diff           int64            `json:"diff"`
	DiffPct        float64          `json:"diff_pct"`
	OK             bool             `json:"ok"`
	TraceCByKind   map[string]int64 `json:"trace_C_by_kind"`
	FlushSeqData   int64            `json:"flush_seq_data_bios"`
	TraceFlushes   int64            `json:"trace_flush_requests"`
	KernelFlushIOs int64            `json:"kernel_flush_ios"`
}

// Tolerance and Slack bound a passing count: within 0.5 % or 3 requests.
const (
	Tolerance = 0.005
	Slack     = 3
)

// TraceCounts are what the check needs from a trace.
type TraceCounts struct {
	// ByCgroup: cgroup id -> action letter (Q M F G I D C X ...) -> events.
	ByCgroup map[uint64]map[string]int64
	// Completions: "read", "write", "discard", "flush" -> C events (flush =
	// empty REQ_OP_FLUSH requests).
	Completions map[string]int64
	// FlushSeqData counts Q events of PREFLUSH/FUA writes with data.
	FlushSeqData int64
	Lost         int64
}

// CgroupCounters are one cgroup's kernel counters around the window.
type CgroupCounters struct {
	Path          string
	ID            uint64
	Before, After map[string]int64
}

// DiskStatFields names the fields of /sys/block/DEV/stat in order.
var DiskStatFields = []string{"read_ios", "read_merges", "read_sectors", "read_ticks", "write_ios",
	"write_merges", "write_sectors", "write_ticks", "in_flight", "io_ticks", "time_in_queue",
	"discard_ios", "discard_merges", "discard_sectors", "discard_ticks", "flush_ios", "flush_ticks"}

// ParseDiskStat reads /sys/block/DEV/stat's text.
func ParseDiskStat(text string) (map[string]int64, error) {
	out := map[string]int64{}
	var f []string
	for _, w := range splitFields(text) {
		f = append(f, w)
	}
	for i, w := range f {
		if i >= len(DiskStatFields) {
			break
		}
		n, err := strconv.ParseInt(w, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("stat field %d (%s): %q is not a number", i+1, DiskStatFields[i], w)
		}
		out[DiskStatFields[i]] = n
	}
	if len(out) < 11 {
		return nil, fmt.Errorf("stat has %d fields, want at least 11", len(f))
	}
	return out, nil
}

// Delta returns after - before per key of after.
func Delta(before, after map[string]int64) map[string]int64 {
	d := make(map[string]int64, len(after))
	for k, v := range after {
		d[k] = v - before[k]
	}
	return d
}

func cmpCount(traced, kernel int64) (diff int64, pct float64, ok bool, over bool) {
	diff = traced - kernel
	rel := 0.0
	switch {
	case kernel != 0:
		rel = math.Abs(float64(diff)) / float64(kernel)
	case traced != 0:
		rel = 1
	}
	over = rel > Tolerance
	ok = !over || abs64(diff) <= Slack
	return diff, math.Round(1e5*rel) / 1e3, ok, over
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// Check compares tc with the kernel's counters: cgs per cgroup, disk the
// device's /sys/block/DEV/stat delta (nil when unknown).
func Check(tc TraceCounts, cgs []CgroupCounters, disk map[string]int64) *Completeness {
	c := &Completeness{Rule: fmt.Sprintf("each count within %.1f %% or %d requests of the kernel's", 100*Tolerance, Slack)}
	checked := 0
	for _, cg := range cgs {
		acts := tc.ByCgroup[cg.ID]
		rqm := acts["M"] + acts["F"] - (acts["Q"] + acts["X"] - acts["G"])
		if rqm < 0 {
			rqm = 0
		}
		e := CgroupCheck{Path: cg.Path, ID: cg.ID, TraceD: acts["D"], TraceC: acts["C"], TraceI: acts["I"], RequestMerges: rqm}
		d := Delta(cg.Before, cg.After)
		var traced, expected int64
		switch {
		case has(cg.After, "bfq.io_serviced.Read"):
			k := d["bfq.io_serviced.Read"] + d["bfq.io_serviced.Write"] + d["bfq.io_serviced.Discard"]
			e.Kernel = &k
			e.Reference = "kernel blkio.bfq.io_serviced delta (read+write)"
			traced, expected = acts["D"], k-rqm
		case has(cg.After, "io.stat.rios"):
			k := d["io.stat.rios"] + d["io.stat.wios"] + d["io.stat.dios"]
			e.Kernel = &k
			e.Reference = "kernel io.stat rios+wios+dios delta (bios); trace Q+X"
			traced, expected = acts["Q"]+acts["X"], k
		default:
			e.Note = "no per-cgroup kernel counters (blkio.bfq.* are kept by BFQ only; no io.stat line for the device)"
			c.PerCgroup = append(c.PerCgroup, e)
			continue
		}
		diff, pct, ok, over := cmpCount(traced, expected)
		e.Traced, e.Expected, e.Diff, e.DiffPct, e.OK = &traced, &expected, &diff, &pct, &ok
		checked++
		if over {
			msg := fmt.Sprintf("cgroup %s: trace has %d, the kernel's counter says %d (%+d, %.2f %%)", cg.Path, traced, expected, diff, pct)
			if ok {
				c.Notes = append(c.Notes, msg)
			} else {
				c.Problems = append(c.Problems, msg)
			}
		}
		c.PerCgroup = append(c.PerCgroup, e)
	}
	if disk != nil {
		tn := tc.Completions["read"] + tc.Completions["write"] + tc.Completions["discard"] - tc.FlushSeqData
		kn := disk["read_ios"] + disk["write_ios"] + disk["discard_ios"]
		diff, pct, ok, over := cmpCount(tn, kn)
		byKind := map[string]int64{}
		for k, v := range tc.Completions {
			byKind[k] = v
		}
		c.Device = &DeviceCheck{Reference: "/sys/block/DEV/stat delta: read_ios+write_ios+discard_ios",
			TraceRequests: tn, KernelIOs: kn, Diff: diff, DiffPct: pct, OK: ok, TraceCByKind: byKind,
			FlushSeqData: tc.FlushSeqData, TraceFlushes: tc.Completions["flush"], KernelFlushIOs: disk["flush_ios"]}
		checked++
		if over {
			msg := fmt.Sprintf("device: trace has %d request completions, /sys/block/DEV/stat says %d (%+d)", tn, kn, diff)
			if ok {
				c.Notes = append(c.Notes, msg)
			} else {
				c.Problems = append(c.Problems, msg)
			}
		}
	}
	if tc.Lost > 0 {
		c.Problems = append(c.Problems, fmt.Sprintf("%d events lost in the ring buffer", tc.Lost))
	}
	c.Checks = checked
	verdict := len(c.Problems) == 0
	if checked == 0 && tc.Lost == 0 {
		c.Problems = append(c.Problems, "nothing to compare with (no kernel counters)")
		c.TraceComplete = nil
		return c
	}
	c.TraceComplete = &verdict
	return c
}

func has(m map[string]int64, k string) bool {
	_, ok := m[k]
	return ok
}

func splitFields(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\t' || s[i] == '\n' {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return out
}
