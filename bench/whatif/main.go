// Command whatif measures tracesched's cross-scheduler predictions and
// writes docs/whatif.md: for every pair of real captures of one workload
// under two schedulers, the source capture is replayed through the other
// scheduler (`tracesched replay --json`, exactly as a user runs it) and the
// prediction is set beside the capture it was made from and the real run
// under the target scheduler (`tracesched diff REAL REAL --json` for its
// contention-window figures). Every figure is a contention-window figure
// (docs/cli.md): the time in which every compared cgroup had I/O queued or
// in flight.
//
//	go run ./bench/whatif [-shared ../shared] [-captures /tmp/wi-captures] [-device probe.json[.zst]|real|behind] [-host HOST.json|default|off] [-o docs/whatif.md]
//
// -captures names a directory of captures recorded with ../shared/rig for
// these pairs (bench/whatif/jobs, bench/whatif/record.sh); pairs whose
// captures are absent are left out and listed. -device adds, for each pair,
// the prediction made with that device model (a `tracesched probe` of the
// loop device) beside the one made with the capture's own calibration;
// by default the probe committed as bench/whatif/loop-probe-vm6.device.json.zst
// (bench/whatif/README.md), -device "" leaves it out. -device real
// predicts each pair again with the model calibrated from its first real
// run instead: an oracle no user has, which splits each error into the
// device model's part and the scheduler's and workload's; -device behind
// with the source calibrated by `tracesched calibrate --behind`.
// Replays run one at a time; JSON outputs are kept in -work and reused
// when -reuse is given.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/tracesched/tracesched/replay"
)

type manifest struct {
	Scheduler string `json:"scheduler"`
	Cgroups   []struct {
		ID       uint64 `json:"cgroup_id"`
		Path     string `json:"path"`
		Weight   *int   `json:"bfq_weight"`
		Messages int    `json:"trace_messages"`
	} `json:"cgroups"`
	Tunables []string `json:"tunables_requested"`
	// TraceComplete is the rig's check of the trace against the kernel's
	// counters; nil in manifests older than the check.
	TraceComplete *bool `json:"trace_complete"`
	// DeviceStat: the device's /sys/block/DEV/stat counters over the run
	// (the rig's device_stat_delta); nil in older manifests.
	DeviceStat *struct {
		ReadSectors  int64 `json:"read_sectors"`
		WriteSectors int64 `json:"write_sectors"`
	} `json:"device_stat_delta"`
}

// deviceBytes is the bytes the device read and wrote over the run, by its
// own counters; 0 when the manifest has none.
func (m manifest) deviceBytes() int64 {
	if m.DeviceStat == nil {
		return 0
	}
	return (m.DeviceStat.ReadSectors + m.DeviceStat.WriteSectors) << 9
}

// incomplete reports whether the rig found the trace incomplete (events
// lost against the kernel's own counters).
func (m manifest) incomplete() bool { return m.TraceComplete != nil && !*m.TraceComplete }

// messages reports whether the trace carries the scheduler's own debug
// messages (the rig counts them per cgroup).
func (m manifest) messages() bool {
	for _, g := range m.Cgroups {
		if g.Messages > 0 {
			return true
		}
	}
	return false
}

// capture is one capture directory: DIR/NAME/NAME.blktrace.*.
type capture struct {
	Name string
	Dir  string
	Man  manifest
}

func (c *capture) base() string { return filepath.Join(c.Dir, c.Name) }

func (c *capture) path(id uint64) string {
	for _, g := range c.Man.Cgroups {
		if g.ID == id {
			return g.Path
		}
	}
	return fmt.Sprint(id)
}

func (c *capture) id(path string) (uint64, bool) {
	for _, g := range c.Man.Cgroups {
		if g.Path == path {
			return g.ID, true
		}
	}
	return 0, false
}

func loadCapture(dir string) (*capture, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	c := &capture{Name: filepath.Base(dir), Dir: dir}
	if err := json.Unmarshal(b, &c.Man); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return c, nil
}

// pair is one what-if: Source replayed through Sched with Weights (by
// cgroup path) and Sets, compared with the real runs Real (one workload,
// several runs where recorded). Note, when set, tells this pair from
// another with the same source, scheduler and settings (its real runs were
// recorded differently) in the pair's name.
type pair struct {
	Group   string
	Source  string
	Sched   string
	Weights map[string]int // cgroup path -> weight; nil: the target capture's own
	Sets    []string
	Real    []string
	Note    string
	// WarmFrom names captures of the target's real runs (traced siblings
	// of untraced Real runs) whose BFQ messages show the state BFQ had
	// when their trace began; Real's own are tried first (-bfq-warm).
	WarmFrom []string
}

// result is the part of `replay --json` / `diff --json` read here.
type result struct {
	Mode              string         `json:"mode"`
	RecordedScheduler string         `json:"recorded_scheduler"`
	Cgroups           []cgroupResult `json:"cgroups"`
	Bandwidth         struct {
		WindowReal float64 `json:"window_real"`
		WindowPred float64 `json:"window_predicted"`
		Compared   []uint64
		Real       figs `json:"real"`
		Pred       figs `json:"predicted"`
	} `json:"bandwidth"`
	Change *struct {
		Changed  []string `json:"changed"`
		InFlight struct {
			Captured  float64 `json:"captured"`
			Predicted float64 `json:"predicted"`
		} `json:"in_flight"`
		Decisions []struct {
			Name      string `json:"name"`
			Captured  int    `json:"captured"`
			Predicted int    `json:"predicted"`
		} `json:"decisions"`
		Causes []string `json:"causes"`
	} `json:"change"`
	DeviceExtrapolation []string `json:"device_extrapolation"`
}

// cgroupResult is one of result's cgroups[].
type cgroupResult struct {
	ID        uint64  `json:"id"`
	Compared  bool    `json:"compared"`
	RealMiBps float64 `json:"real_mib_per_s"`
	PredMiBps float64 `json:"predicted_mib_per_s"`
	RealShare float64 `json:"real_share"`
	PredShare float64 `json:"predicted_share"`
	RealP50   float64 `json:"real_p50_seconds"`
	PredP50   float64 `json:"predicted_p50_seconds"`
	RealP99   float64 `json:"real_p99_seconds"`
	PredP99   float64 `json:"predicted_p99_seconds"`
}

type figs struct {
	MiBps float64 `json:"mib_per_s"`
	P50   float64 `json:"p50_seconds"`
	P99   float64 `json:"p99_seconds"`
}

// row is one cgroup (or the total) of a pair.
type row struct {
	Path              string
	Weight            int
	CapMiB, CapShare  float64
	CapP50            float64
	PredMiB, PredShr  float64
	PredP50           float64
	DevMiB, DevShr    float64 // with -device
	DevP50            float64
	RealMiB, RealShr  []float64 // per real run
	RealP50           []float64
	HasDev, HasShares bool
}

type outcome struct {
	P       pair
	Rows    []row
	Total   row
	Res     *result
	Dev     *result
	Skipped string
	// Left: real runs present but left out (their traces incomplete).
	Left []string
	// Traced: the replays were given a traced host table (the real runs
	// carry the target scheduler's messages, tracedHost).
	Traced bool
	// Warm, Warmed: the max_budget the replays started BFQ at
	// (--bfq-warm, -bfq-warm real) and the capture it came from; 0: cold.
	Warm   int64
	Warmed string
	Secs   float64
}

var (
	flagShared   = flag.String("shared", "../shared", "the team's shared directory (captures/)")
	flagCaptures = flag.String("captures", "/tmp/wi-captures", "captures recorded for these pairs with ../shared/rig (bench/whatif/jobs)")
	flagDevice   = flag.String("device", defaultDevice, "a device model (tracesched probe; FILE.zst: zstd-compressed) to predict every pair with as well; \"real\": each pair's first real run's own calibration (an oracle: the device as the target scheduler drove it); \"behind\": the source calibrated with --behind; \"\": none")
	flagOut      = flag.String("o", "docs/whatif.md", "the report to write")
	flagWork     = flag.String("work", "/tmp/wi-bench", "where the JSON outputs are kept")
	flagReuse    = flag.Bool("reuse", false, "reuse JSON outputs already in -work")
	flagBin      = flag.String("tracesched", "", "the tracesched binary (default: built from ./cmd/tracesched)")
	flagOnly     = flag.String("only", "", "run only the pairs whose source name contains this")
	flagGroup    = flag.String("group", "", "run only the pairs of this group (recorded, weights, recorded-fs, rig, seed000, untraced, fsync)")
	flagStalls   = flag.String("stalls", "", "passed to every replay as --stalls (keep or drop); \"\": the replay's default (keep)")
	flagWBT      = flag.Int("wbt", 0, "passed to every replay as --set wbt_lat_usec=N (the writeback throttle's target, microseconds); 0: not passed (the throttle off)")
	flagHost     = flag.String("host", "default", "passed to every replay as --host (a HOST.json of per-scheduler submission costs, default: the built-in table, or off)")
	flagWarm     = flag.String("bfq-warm", "cold", "how a replay into BFQ starts: \"real\" as the real runs' BFQ did when their traces began (its first recalc_budg message: --bfq-warm max_budget=N; cold when they show none), \"cold\" as a BFQ just started (tracesched's default)")
	flagTraced   = flag.Bool("traced", true, "predict a pair whose real runs carry the target scheduler's messages with that scheduler traced: the -host table's TARGET+messages cost taken as TARGET's")
)

// defaultDevice is the probe of the rig's loop device committed beside
// this script, of the VM the rig/ captures of docs/whatif.md were last
// recorded on (bench/whatif/README.md says how it was made).
const defaultDevice = "bench/whatif/loop-probe-vm6.device.json.zst"

// devicePath is the -device model as replay reads it (decompressed into
// -work when compressed), "" for none or for a calibration made per pair
// (deviceReal, deviceBehind).
var devicePath string

// deviceReal is the -device value that predicts each pair again with the
// device model calibrated from its first real run (calibrated): the
// device as it behaved under the target scheduler, which no what-if has.
// The difference between that prediction and the one with the source's
// own calibration is the part of the error the device model makes when
// it leaves the source's operating point; what remains is the
// scheduler's and the workload's.
const deviceReal = "real"

// deviceBehind is the -device value that predicts each pair again with
// the source capture calibrated by `tracesched calibrate --behind` (the
// wait of small requests behind large ones, off in replay's own
// calibration): a candidate for what-ifs, judged on every pair.
const deviceBehind = "behind"

// perPairDevice reports whether -device names a calibration made for each
// pair rather than a file.
func perPairDevice() bool { return *flagDevice == deviceReal || *flagDevice == deviceBehind }

// devLabel names the alternative device model of the report's columns,
// and devShort in a table heading.
func devLabel() string { l, _ := devNames(); return l }
func devShort() string { _, s := devNames(); return s }

func devNames() (label, short string) {
	switch *flagDevice {
	case deviceReal:
		return "the real run's device model", "real run's device"
	case deviceBehind:
		return "the source calibrated with --behind", "--behind"
	}
	return "the probe's device model", "probe"
}

// calibrated returns the device model `tracesched calibrate` fits to
// capture c with the extra flags, written into -work (kept with -reuse).
func calibrated(bin string, c *capture, flags ...string) (string, error) {
	out := filepath.Join(*flagWork, "device."+c.Name+strings.Join(flags, "")+".json")
	if *flagReuse {
		if _, err := os.Stat(out); err == nil {
			return out, nil
		}
	}
	cmd := exec.Command(bin, append([]string{"calibrate", c.base(), "-o", out}, flags...)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("tracesched calibrate %s: %v: %s", c.base(), err, lastLine(errb.String()))
	}
	return out, nil
}

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "whatif:", err)
		os.Exit(1)
	}
}

func pairs() []pair {
	w := func(kv ...any) map[string]int {
		m := map[string]int{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1].(int)
		}
		return m
	}
	cg := func(a, b int) map[string]int { return w("/tsched-cg1", a, "/tsched-cg2", b) }
	cg3 := func(a, b, c int) map[string]int { return w("/tsched-cg1", a, "/tsched-cg2", b, "/tsched-cg3", c) }
	ps := []pair{
		{Group: "recorded", Source: "recorded/b-mqdl-w100-900", Sched: "bfq", Weights: cg(100, 900), Real: []string{"recorded/a-bfq-w100-900"}},
		{Group: "recorded", Source: "recorded/b-mqdl-w500-500", Sched: "bfq", Weights: cg(300, 700), Real: []string{"recorded/a-bfq-w300-700"}},
		{Group: "recorded", Source: "recorded/b-mqdl-w100-900", Sched: "bfq", Weights: cg(300, 700), Real: []string{"recorded/a-bfq-w300-700"}},
		{Group: "recorded", Source: "recorded/a-bfq-w100-900", Sched: "mq-deadline", Real: []string{"recorded/b-mqdl-w100-900", "recorded/b-mqdl-w500-500"}},
		{Group: "recorded", Source: "recorded/a-bfq-w300-700", Sched: "mq-deadline", Real: []string{"recorded/b-mqdl-w500-500", "recorded/b-mqdl-w100-900"}},
		// The same scheduler, other weights or tunables (what an SRE asks of
		// the machine's own BFQ): one job recorded at 100:900, 300:700 and
		// 100:900 with slice_idle=0, each predicted from another.
		{Group: "weights", Source: "recorded/a-bfq-w100-900", Sched: "bfq", Weights: cg(300, 700), Real: []string{"recorded/a-bfq-w300-700"}},
		{Group: "weights", Source: "recorded/a-bfq-w300-700", Sched: "bfq", Weights: cg(100, 900), Real: []string{"recorded/a-bfq-w100-900"}},
		{Group: "weights", Source: "recorded/a-bfq-w100-900", Sched: "bfq", Weights: cg(100, 900), Sets: []string{"slice_idle=0"}, Real: []string{"recorded/e-bfq-w100-900-idle0"}},
		{Group: "weights", Source: "recorded/e-bfq-w100-900-idle0", Sched: "bfq", Weights: cg(100, 900), Sets: []string{"slice_idle=8"}, Real: []string{"recorded/a-bfq-w100-900"}},
	}
	// The file-system jobs of recorded-fs, each under mq-deadline and
	// BFQ; the BFQ captures' tunables where they set some.
	fsJobs := []struct{ mq, bfq string }{
		{"fs-mqdl-2bufread", "fs-bfq-2bufread-idle2ms"}, {"fs-mqdl-fsync-vs-seqread", "fs-bfq-fsync-vs-seqread"},
		{"fs-mqdl-writeback", "fs-bfq-writeback"}, {"fs-mqdl-untar", "fs-bfq-untar"}, {"fs-mqdl-pgbench", "fs-bfq-pgbench"},
	}
	fsSets := func(bfq string) []string {
		if strings.Contains(bfq, "idle2ms") {
			return []string{"slice_idle_us=2000"}
		}
		return nil
	}
	for _, fs := range fsJobs {
		sets := fsSets(fs.bfq)
		// The second runs (record.sh, rec_fs) are real runs too where
		// -captures holds them.
		ps = append(ps,
			pair{Group: "recorded-fs", Source: "recorded-fs/" + fs.mq, Sched: "bfq", Sets: sets, Real: []string{"recorded-fs/" + fs.bfq, "rig/" + fs.bfq + "-r2"}},
			pair{Group: "recorded-fs", Source: "recorded-fs/" + fs.bfq, Sched: "mq-deadline", Real: []string{"recorded-fs/" + fs.mq, "rig/" + fs.mq + "-r2"}})
	}
	a4, b4 := cg3(100, 300, 600), cg3(600, 300, 100)
	a3, b3 := cg3(200, 300, 500), cg3(800, 100, 100)
	ps = append(ps,
		pair{Group: "rig", Source: "rig/wi-mix4-mqdl", Sched: "bfq", Weights: a4, Real: []string{"rig/wi-mix4-bfq-a", "rig/wi-mix4-bfq-a2"}},
		pair{Group: "rig", Source: "rig/wi-mix4-mqdl", Sched: "bfq", Weights: b4, Real: []string{"rig/wi-mix4-bfq-b"}},
		pair{Group: "rig", Source: "rig/wi-mix4-none", Sched: "bfq", Weights: a4, Real: []string{"rig/wi-mix4-bfq-a", "rig/wi-mix4-bfq-a2"}},
		pair{Group: "rig", Source: "rig/wi-mix4-bfq-a", Sched: "mq-deadline", Real: []string{"rig/wi-mix4-mqdl", "rig/wi-mix4-mqdl2"}},
		pair{Group: "rig", Source: "rig/wi-mix3-mqdl", Sched: "bfq", Weights: a3, Real: []string{"rig/wi-mix3-bfq-a", "rig/wi-mix3-bfq-a2"}},
		pair{Group: "rig", Source: "rig/wi-mix3-mqdl", Sched: "bfq", Weights: b3, Real: []string{"rig/wi-mix3-bfq-b"}},
		pair{Group: "rig", Source: "rig/wi-mix3-bfq-a", Sched: "mq-deadline", Real: []string{"rig/wi-mix3-mqdl", "rig/wi-mix3-mqdl2"}},
	)
	for _, s := range [][2]int{{100, 900}, {200, 800}, {300, 700}, {400, 600}, {500, 500}} {
		ps = append(ps, pair{Group: "seed000", Source: "rig/wi-seed000-mqdl", Sched: "bfq", Weights: cg(s[0], s[1]),
			Real: []string{fmt.Sprintf("rig/wi-seed000-bfq-%d-%d", s[0]/10, s[1]/10)}})
	}
	// low_latency=0 (the real runs at load averages 3.9 and 9.2: cg1 0.133 and
	// 0.256 of the contention window). The source's fio stalls (load 23.5)
	// give cg2's queue cg1 as its waker on a fast device (bfq_check_waker).
	ps = append(ps, pair{Group: "rig", Source: "rig/wi-seed000-mqdl", Sched: "bfq", Weights: cg(100, 900), Sets: []string{"low_latency=0"},
		Real: []string{"rig/wi-seed000-bfq-10-90-ll0-2", "rig/wi-seed000-bfq-10-90-ll0"}})
	// The stall job (jobs/seed000-stall.fio: cg2 sleeps 12 ms every 1500
	// reads) recorded under mq-deadline at a load average of 7.8: its sleeps
	// are the application's (replay.Workload's stall rule keeps them under
	// --stalls drop) and lose BFQ the weights as in the real run (cg1 0.486).
	ps = append(ps, pair{Group: "rig", Source: "rig/wi-seed000-stall-mqdl", Sched: "bfq", Weights: cg(100, 900), Sets: []string{"low_latency=0"},
		Real: []string{"rig/wi-seed000-stall-bfq-10-90-ll0"}})
	// The same what-ifs against real BFQ runs recorded without BFQ's debug
	// messages (capture.sh -M, record.sh's *-nomsg): with them on, every
	// request logs about 17 messages into ftrace and fio spends 23-30 us of
	// CPU per I/O under BFQ against 7.5-12 under mq-deadline and none, so
	// the runs above are paced by the tracing, which production BFQ does
	// not pay.
	const nomsg = "real runs without BFQ messages"
	ps = append(ps,
		pair{Group: "rig", Source: "rig/wi-seed000-mqdl", Sched: "bfq", Weights: cg(100, 900), Note: nomsg,
			Real: []string{"rig/wi-seed000-bfq-10-90-nomsg", "rig/wi-seed000-bfq-10-90-nomsg-2"}},
		pair{Group: "rig", Source: "rig/wi-seed000-mqdl", Sched: "bfq", Weights: cg(300, 700), Note: nomsg,
			Real: []string{"rig/wi-seed000-bfq-30-70-nomsg"}},
		pair{Group: "rig", Source: "rig/wi-mix4-mqdl", Sched: "bfq", Weights: a4, Note: nomsg,
			Real: []string{"rig/wi-mix4-bfq-a-nomsg"}})
	// The what-ifs of recorded/ against runs of their jobs without blktrace
	// (recorded/baselines-untraced, fio's own figures: fioResult): what
	// tracesched predicts by default, the target scheduler untraced. With
	// BFQ's messages traced its fio jobs ran 35.8 k (100:900), 27.1 k
	// (300:700) and 36.8 k IOPS (slice_idle=0) where untraced they ran
	// 47.2 k, 47.6 k and 73.3 k; mq-deadline 69 k and 72.7 k.
	const untraced = "real runs untraced"
	ps = append(ps,
		pair{Group: "untraced", Source: "recorded/b-mqdl-w100-900", Sched: "bfq", Weights: cg(100, 900), Note: untraced, Real: []string{"untraced/a-bfq-w100-900"}},
		pair{Group: "untraced", Source: "recorded/b-mqdl-w500-500", Sched: "bfq", Weights: cg(300, 700), Note: untraced, Real: []string{"untraced/a-bfq-w300-700"}},
		pair{Group: "untraced", Source: "recorded/b-mqdl-w100-900", Sched: "bfq", Weights: cg(300, 700), Note: untraced, Real: []string{"untraced/a-bfq-w300-700"}},
		pair{Group: "untraced", Source: "recorded/b-mqdl-w100-900", Sched: "bfq", Weights: cg(100, 900), Sets: []string{"slice_idle=0"}, Note: untraced, Real: []string{"untraced/e-bfq-w100-900-idle0"}},
		pair{Group: "untraced", Source: "recorded/a-bfq-w100-900", Sched: "mq-deadline", Note: untraced, Real: []string{"untraced/b-mqdl-w100-900", "untraced/b-mqdl-w500-500"}},
		pair{Group: "untraced", Source: "recorded/a-bfq-w300-700", Sched: "mq-deadline", Note: untraced, Real: []string{"untraced/b-mqdl-w500-500", "untraced/b-mqdl-w100-900"}},
		pair{Group: "untraced", Source: "recorded/a-bfq-w100-900", Sched: "bfq", Weights: cg(300, 700), Note: untraced, Real: []string{"untraced/a-bfq-w300-700"}},
		pair{Group: "untraced", Source: "recorded/a-bfq-w300-700", Sched: "bfq", Weights: cg(100, 900), Note: untraced, Real: []string{"untraced/a-bfq-w100-900"}},
		pair{Group: "untraced", Source: "recorded/a-bfq-w100-900", Sched: "bfq", Weights: cg(100, 900), Sets: []string{"slice_idle=0"}, Note: untraced, Real: []string{"untraced/e-bfq-w100-900-idle0"}},
		pair{Group: "untraced", Source: "recorded/e-bfq-w100-900-idle0", Sched: "bfq", Weights: cg(100, 900), Sets: []string{"slice_idle=8"}, Note: untraced, Real: []string{"untraced/a-bfq-w100-900"}},
	)
	// The same file-system jobs with source and real run from one device:
	// the second runs (rig/NAME-r2, the tmpfs-backed loop device) against
	// each other, of the jobs record.sh records again (the writeback pair
	// is not here: fs-bfq-writeback-r2's trace is incomplete).
	for _, fs := range fsJobs[:2] {
		sets := fsSets(fs.bfq)
		ps = append(ps,
			pair{Group: "rig", Source: "rig/" + fs.mq + "-r2", Sched: "bfq", Sets: sets, Real: []string{"rig/" + fs.bfq + "-r2"}},
			pair{Group: "rig", Source: "rig/" + fs.bfq + "-r2", Sched: "mq-deadline", Real: []string{"rig/" + fs.mq + "-r2"}})
	}
	// The fsync writer against an unpaced buffered reader (record-fsync.sh,
	// two runs of each): the chain's wake-up delays are the host's, and
	// the two BFQ runs of 2026-12-03 differed by 1.9 times (README.md).
	for _, r := range []string{"", "-2"} {
		bfqRuns := []string{"rig/fsx-bfq-rmax", "rig/fsx-bfq-rmax-2"}
		mqRuns := []string{"rig/fsx-mqdl-rmax", "rig/fsx-mqdl-rmax-2"}
		ps = append(ps,
			pair{Group: "fsync", Source: "rig/fsx-mqdl-rmax" + r, Sched: "bfq", Real: bfqRuns},
			pair{Group: "fsync", Source: "rig/fsx-none-rmax" + r, Sched: "bfq", Real: bfqRuns},
			pair{Group: "fsync", Source: "rig/fsx-bfq-rmax" + r, Sched: "mq-deadline", Real: mqRuns},
			pair{Group: "fsync", Source: "rig/fsx-none-rmax" + r, Sched: "mq-deadline", Real: mqRuns})
	}
	// The same pairs against the job run without blktrace (record-fsync.sh's
	// -u, -u2: fio's figures), what the replays predict by default: the
	// target scheduler untraced.
	for _, r := range []string{"", "-2"} {
		bfqRuns := []string{"rig/fsx-bfq-rmax-u", "rig/fsx-bfq-rmax-u2"}
		mqRuns := []string{"rig/fsx-mqdl-rmax-u", "rig/fsx-mqdl-rmax-u2"}
		ps = append(ps,
			pair{Group: "fsync", Source: "rig/fsx-mqdl-rmax" + r, Sched: "bfq", Note: untraced, Real: bfqRuns, WarmFrom: []string{"rig/fsx-bfq-rmax-2"}},
			pair{Group: "fsync", Source: "rig/fsx-none-rmax" + r, Sched: "bfq", Note: untraced, Real: bfqRuns, WarmFrom: []string{"rig/fsx-bfq-rmax-2"}},
			pair{Group: "fsync", Source: "rig/fsx-bfq-rmax" + r, Sched: "mq-deadline", Note: untraced, Real: mqRuns},
			pair{Group: "fsync", Source: "rig/fsx-none-rmax" + r, Sched: "mq-deadline", Note: untraced, Real: mqRuns})
	}
	return ps
}

// locate maps "recorded/X", "recorded-fs/X", "rig/X" and "untraced/X"
// (recorded/baselines-untraced/X: a run without a trace) to a capture.
func locate(name string) (*capture, error) {
	g, n, _ := strings.Cut(name, "/")
	dir := filepath.Join(*flagShared, "captures", g, n)
	switch g {
	case "rig":
		dir = filepath.Join(*flagCaptures, n)
	case "untraced":
		dir = filepath.Join(*flagShared, untracedDir, n)
	}
	return loadCapture(dir)
}

func run() error {
	bin := *flagBin
	if bin == "" {
		bin = filepath.Join(os.TempDir(), "whatif-tracesched")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/tracesched")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building tracesched: %w", err)
		}
	}
	if err := os.MkdirAll(*flagWork, 0o755); err != nil {
		return err
	}
	if err := prepareDevice(); err != nil {
		return err
	}
	var outs []outcome
	for _, p := range pairs() {
		if *flagOnly != "" && !strings.Contains(p.Source, *flagOnly) || *flagGroup != "" && p.Group != *flagGroup {
			continue
		}
		o := runPair(bin, p)
		if o.Skipped != "" {
			fmt.Fprintf(os.Stderr, "whatif: %s -> %s: skipped: %s\n", p.Source, p.Sched, o.Skipped)
		} else {
			fmt.Fprintf(os.Stderr, "whatif: %s -> %s (%.1f s)\n", p.Source, p.Sched, o.Secs)
		}
		outs = append(outs, o)
	}
	var buf bytes.Buffer
	render(&buf, outs)
	tmp := *flagOut + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, *flagOut)
}

// prepareDevice sets devicePath from -device: the file itself, or a
// .zst decompressed into -work. The default model absent (a checkout
// without it) means none, said on stderr; a named one must exist.
func prepareDevice() error {
	in := *flagDevice
	if in == "" || perPairDevice() {
		return nil
	}
	b, err := os.ReadFile(in)
	if errors.Is(err, os.ErrNotExist) && in == defaultDevice {
		fmt.Fprintf(os.Stderr, "whatif: %s absent: no probe columns\n", in)
		return nil
	}
	if err != nil {
		return err
	}
	if !strings.HasSuffix(in, ".zst") {
		devicePath = in
		return nil
	}
	d, err := zstd.NewReader(nil)
	if err != nil {
		return err
	}
	defer d.Close()
	if b, err = d.DecodeAll(b, nil); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	devicePath = filepath.Join(*flagWork, strings.TrimSuffix(filepath.Base(in), ".zst"))
	return os.WriteFile(devicePath, b, 0o644)
}

func key(p pair, extra string) string {
	var ws []string
	for _, k := range slices.Sorted(mapsKeys(p.Weights)) {
		ws = append(ws, fmt.Sprintf("%s=%d", strings.TrimPrefix(k, "/"), p.Weights[k]))
	}
	s := strings.ReplaceAll(p.Source, "/", "_") + "." + p.Sched + "." + strings.Join(ws, ",") + "." + strings.Join(p.Sets, ",") + extra
	return filepath.Join(*flagWork, s+".json")
}

func mapsKeys[M ~map[K]V, K comparable, V any](m M) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// tracesched runs the binary, caching its stdout in file.
func tracesched(bin, file string, args ...string) (*result, error) {
	if *flagReuse {
		if b, err := os.ReadFile(file); err == nil {
			var r result
			if json.Unmarshal(b, &r) == nil {
				return &r, nil
			}
		}
	}
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("tracesched %s: %v: %s", strings.Join(args, " "), err, lastLine(errb.String()))
	}
	if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
		return nil, err
	}
	os.WriteFile(strings.TrimSuffix(file, ".json")+".stderr", errb.Bytes(), 0o644)
	var r result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return nil, fmt.Errorf("tracesched %s: %w", strings.Join(args, " "), err)
	}
	return &r, nil
}

// tracedHost returns the path of a host table (written into -work) that
// is host's ("default": replay.DefaultHostCosts) with sched's cost
// replaced by its sched+messages cost, or host itself when the table has
// no such cost: the real runs of the pair were recorded with the
// scheduler's messages traced, which cost the submitting CPU more than
// the untraced scheduler a what-if predicts (replay.MessagesSuffix), so
// the pair is predicted as it was run.
func tracedHost(host, sched string) (string, error) {
	h := replay.DefaultHostCosts()
	if host != "default" {
		var err error
		if h, err = replay.ReadHostCosts(host); err != nil {
			return "", err
		}
	}
	h, ok := h.Traced(sched)
	if !ok {
		return host, nil
	}
	h.Measured = fmt.Sprintf("%s, with %s's cost that of %s%s (bench/whatif -traced)", h.Measured, sched, sched, replay.MessagesSuffix)
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(*flagWork, strings.TrimSuffix(filepath.Base(host), ".json")+"-traced-"+sched+".json")
	return path, os.WriteFile(path, append(b, '\n'), 0o644)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func runPair(bin string, p pair) outcome {
	o := outcome{P: p}
	start := time.Now()
	src, err := locate(p.Source)
	if err != nil {
		o.Skipped = err.Error()
		return o
	}
	if src.Man.incomplete() {
		o.Skipped = p.Source + ": the rig found its trace incomplete"
		return o
	}
	var reals []*capture
	var found []string
	for _, r := range p.Real {
		c, err := locate(r)
		switch {
		case err != nil:
		case c.Man.incomplete():
			o.Left = append(o.Left, r)
		default:
			reals = append(reals, c)
			found = append(found, r)
		}
	}
	if len(reals) == 0 {
		o.Skipped = "no real capture under the target scheduler: " + strings.Join(p.Real, ", ")
		return o
	}
	o.P.Real = found // the report names the runs compared
	// Weights by the source's cgroup ids: given, else the first real run's.
	weights := p.Weights
	if weights == nil && p.Sched == "bfq" {
		weights = map[string]int{}
		for _, g := range reals[0].Man.Cgroups {
			if g.Weight != nil {
				weights[g.Path] = *g.Weight
			}
		}
	}
	args := []string{"replay", "--sched", p.Sched, "--json"}
	var wargs []string
	for _, path := range slices.Sorted(mapsKeys(weights)) {
		if id, ok := src.id(path); ok {
			wargs = append(wargs, "--weight", fmt.Sprintf("%d=%d", id, weights[path]))
		}
	}
	args = append(args, wargs...)
	for _, s := range p.Sets {
		args = append(args, "--set", s)
	}
	host := *flagHost
	if *flagTraced && host != "off" && slices.ContainsFunc(reals, func(c *capture) bool { return c.Man.messages() }) {
		if host, err = tracedHost(host, p.Sched); err != nil {
			o.Skipped = err.Error()
			return o
		}
	}
	o.Traced = host != *flagHost
	args = append(args, "--host", host)
	hostKey := ".host-" + strings.TrimSuffix(filepath.Base(host), ".json")
	if p.Sched == "bfq" && *flagWarm == "real" {
		if o.Warm, o.Warmed, err = realWarm(append(slices.Clone(o.P.Real), p.WarmFrom...)); err != nil {
			o.Skipped = err.Error()
			return o
		}
		if o.Warm > 0 {
			args = append(args, "--bfq-warm", fmt.Sprintf("max_budget=%d", o.Warm))
			hostKey += fmt.Sprintf(".warm-%d", o.Warm)
		}
	}
	if *flagStalls != "" {
		args = append(args, "--stalls", *flagStalls)
		hostKey += ".stalls-" + *flagStalls
	}
	if *flagWBT > 0 {
		args = append(args, "--set", fmt.Sprintf("wbt_lat_usec=%d", *flagWBT))
		hostKey += fmt.Sprintf(".wbt-%d", *flagWBT)
	}
	o.Res, err = tracesched(bin, key(p, hostKey), append(args, src.base())...)
	if err != nil {
		o.Skipped = err.Error()
		return o
	}
	if dev := devicePath; dev != "" || perPairDevice() {
		switch *flagDevice {
		case deviceReal:
			dev, err = calibrated(bin, reals[0])
		case deviceBehind:
			dev, err = calibrated(bin, src, "--behind")
		}
		if err != nil {
			o.Skipped = err.Error()
			return o
		}
		o.Dev, err = tracesched(bin, key(p, hostKey+".device-"+strings.TrimSuffix(filepath.Base(dev), ".json")), append(append(args, "--device", dev), src.base())...)
		if err != nil {
			o.Skipped = err.Error()
			return o
		}
	}
	// The real runs' own contention-window figures, over the cgroups given
	// weights (or all busy ones).
	var realRes []*result
	for _, rc := range reals {
		if rc.untraced() {
			r, err := fioResult(rc, weights)
			if err != nil {
				o.Skipped = err.Error()
				return o
			}
			realRes = append(realRes, r)
			continue
		}
		dargs := []string{"diff", "--json"}
		for _, path := range slices.Sorted(mapsKeys(weights)) {
			if id, ok := rc.id(path); ok {
				dargs = append(dargs, "--weight", fmt.Sprintf("%d=%d", id, weights[path]))
			}
		}
		r, err := tracesched(bin, filepath.Join(*flagWork, "real."+rc.Name+"."+strings.Join(dargs[2:], ",")+".json"), append(dargs, rc.base(), rc.base())...)
		if err != nil {
			o.Skipped = err.Error()
			return o
		}
		realRes = append(realRes, r)
	}
	for _, c := range o.Res.Cgroups {
		if !c.Compared {
			continue
		}
		path := src.path(c.ID)
		r := row{Path: path, Weight: weights[path], CapMiB: c.RealMiBps, CapShare: c.RealShare, CapP50: c.RealP50,
			PredMiB: c.PredMiBps, PredShr: c.PredShare, PredP50: c.PredP50, HasShares: true}
		if o.Dev != nil {
			for _, d := range o.Dev.Cgroups {
				if d.ID == c.ID {
					r.DevMiB, r.DevShr, r.DevP50, r.HasDev = d.PredMiBps, d.PredShare, d.PredP50, true
				}
			}
		}
		for i, rr := range realRes {
			id, ok := reals[i].id(path)
			for _, g := range rr.Cgroups {
				if ok && g.ID == id {
					r.RealMiB = append(r.RealMiB, g.RealMiBps)
					r.RealShr = append(r.RealShr, g.RealShare)
					if !math.IsNaN(g.RealP50) { // an untraced buffered job's: none
						r.RealP50 = append(r.RealP50, g.RealP50)
					}
				}
			}
		}
		o.Rows = append(o.Rows, r)
	}
	b := o.Res.Bandwidth
	o.Total = row{Path: "total", CapMiB: b.Real.MiBps, CapP50: b.Real.P50, PredMiB: b.Pred.MiBps, PredP50: b.Pred.P50}
	if o.Dev != nil {
		o.Total.DevMiB, o.Total.DevP50, o.Total.HasDev = o.Dev.Bandwidth.Pred.MiBps, o.Dev.Bandwidth.Pred.P50, true
	}
	for _, rr := range realRes {
		o.Total.RealMiB = append(o.Total.RealMiB, rr.Bandwidth.Real.MiBps)
		if !math.IsNaN(rr.Bandwidth.Real.P50) {
			o.Total.RealP50 = append(o.Total.RealP50, rr.Bandwidth.Real.P50)
		}
	}
	o.Secs = time.Since(start).Seconds()
	return o
}

// nearest returns the real run's value closest to v by the relative
// error reported (relErr), and the error against it: the runs of one job
// differ, and a prediction within the spread of the runs is as good as
// the runs are. (By absolute distance a p50 of 27 ms was compared with a
// run's 6.0 ms, +357 %, rather than with another's 270 ms, -90 %.)
func nearest(v float64, runs []float64) (float64, bool) {
	if len(runs) == 0 {
		return 0, false
	}
	best := runs[0]
	for _, r := range runs[1:] {
		if e, b := math.Abs(relErr(v, r)), math.Abs(relErr(v, best)); e < b || math.IsNaN(b) {
			best = r
		}
	}
	return best, true
}

// nearestAbs is nearest by absolute distance: for shares, whose error is
// reported in percentage points.
func nearestAbs(v float64, runs []float64) (float64, bool) {
	if len(runs) == 0 {
		return 0, false
	}
	best := runs[0]
	for _, r := range runs[1:] {
		if math.Abs(r-v) < math.Abs(best-v) {
			best = r
		}
	}
	return best, true
}

func relErr(pred, real float64) float64 {
	if real == 0 {
		return math.NaN()
	}
	return (pred - real) / real
}
