package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracesched/tracesched/device"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/internal/pipeline"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/report"
	"github.com/tracesched/tracesched/scheduler/bfq"
	"github.com/tracesched/tracesched/trace"
	"github.com/tracesched/tracesched/trace/arrowfile"
	"github.com/tracesched/tracesched/tui"
)

type replayOptions struct {
	input        string
	sched        string
	devicePath   string
	hostPath     string
	sets         []string
	weights      []string
	bfqWarm      []string
	ioprios      []string
	kernel       string
	features     []string
	mode         string
	work         string
	stalls       string
	out          string
	results      string
	json         bool
	tui          bool
	listFeatures bool
	seed         uint64
	seeds        int // --seeds: the replay made at seed, seed+1, ... (1: once)
	hz           int
	reports      reportOutputs // --report, --svg, --png
	fit          *device.Fit   // the device model's calibration, when calibrated

	recordedSched string
	noCache       bool
	allowPartial  bool
	mf            manifestFlags
	schedFrom     string
}

func newReplayCmd(ios *IOStreams) *cobra.Command {
	opts := &replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay --sched none|mq-deadline|bfq|cfq INPUT [flags]",
		Short: "Replay a capture through a scheduler model and diff the prediction against it",
		Long: `Replay rebuilds the capture's workload (each process's bios in order, with their sectors,
sizes, flags and cgroups), replays it through a scheduler model and a device model
calibrated from the capture itself (or given with --device), then diffs the prediction
against the capture: dispatch order, per-cgroup bandwidth, merges, think time, latency.

Closed loop by default: a process that waited for its own completions in the capture
waits for the predicted ones, with the think time it showed; --mode open replays every
bio at its captured time. --work says how much each process does: fixed sends the
captured bios once; timed lets a process that was still doing I/O when the capture ended
(a time-based job) send its bios again, cycle after cycle, until the capture's span has
passed, so a process the recording scheduler starved or favoured does under the replayed
one what that scheduler lets it do in the same time; auto (the default) is timed in a
what-if (the replay changes the scheduler, kernel, weights or tunables) and fixed when
validating.

Settings: --set takes queue attributes as sysfs names them, under queue/iosched/ (the
scheduler's tunables: slice_idle_us=2000, low_latency=0) or queue/ (rotational=0,
nr_requests=64, max_sectors_kb=512, max_segments=128, wbt_lat_usec=2000: writeback throttling
of asynchronous writes modelled, off unless given). A capture does not record whether the device was
rotational: the default is rotational, as the kernel reports SCSI, virtio and loop
devices, except for NVMe devices (major 259); say rotational=0 for flash behind
another driver. --weight takes a cgroup by numeric id (as the capture records it) or
by path when the capture names paths.`,
		Example: `  # Replay a BFQ capture through the BFQ model with its cgroups' weights
  $ tracesched replay --sched bfq --weight 1181=100 --weight 1201=900 fixtures/fx-bfq-2cg-w100-900/fx-bfq-2cg-w100-900

  # What would BFQ before Linux 6.2 have done?
  $ tracesched replay --sched bfq --kernel 6.1 sda

  # The same capture through mq-deadline, as JSON
  $ tracesched replay --sched mq-deadline sda --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.listFeatures {
				return rangeArgs(0, 1)(cmd, args)
			}
			return exactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.schedFrom = "--sched"
			if opts.sched == "" && len(args) == 1 && !opts.listFeatures {
				opts.sched, opts.schedFrom = recordedSched(&opts.mf, args[0]), "manifest"
			}
			if opts.sched == "" {
				return usagef("replay needs --sched none|mq-deadline|bfq|cfq (or a manifest beside INPUT that names one of them)")
			}
			model, err := findSched(opts.sched)
			if err != nil {
				return err
			}
			if opts.listFeatures {
				fmt.Fprint(ios.Out, featureTable(model))
				return nil
			}
			opts.input = args[0]
			if opts.json && opts.tui {
				return usagef("--json and --tui exclude each other")
			}
			return replayRun(cmd.Context(), ios, opts, model)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.sched, "sched", "", "scheduler model: `none|mq-deadline|bfq|cfq`")
	f.StringVar(&opts.devicePath, "device", "", "device timing model `DEVICE.json` (default: calibrated from INPUT)")
	f.StringVar(&opts.hostPath, "host", "default", "host model of a what-if that changes the scheduler: submission costs per scheduler, `HOST.json`; default: the table measured on the rig's loop device; off: none")
	f.StringArrayVar(&opts.sets, "set", nil, "queue attribute `NAME=VALUE` as sysfs names it (repeatable)")
	f.StringArrayVar(&opts.weights, "weight", nil, "cgroup weight `CGROUP=W`, CGROUP a numeric id or a path (repeatable)")
	f.StringArrayVar(&opts.bfqWarm, "bfq-warm", nil, "BFQ's state when the capture began, `max_budget=SECTORS`: the auto-tuned bfq_max_budget (peak rate x 125 ms), for a what-if whose capture has no BFQ messages (default: the capture's first recalc_budg message, else a freshly started BFQ)")
	f.StringArrayVar(&opts.ioprios, "ioprio", nil, "I/O priority of a process: `PID=rt/N|be/N|idle` (repeatable; default be/4)")
	f.StringVar(&opts.kernel, "kernel", "", "behave as kernel `VERSION` did (bfq: 5.10 5.11 5.12 5.13 6.1 6.2 6.18; cfq: 4.13 4.19)")
	f.StringArrayVar(&opts.features, "feature", nil, "flip one historical behaviour: `NAME=on|off` (repeatable; see --list-features)")
	f.StringVar(&opts.mode, "mode", "closed", "`closed`: processes wait for their own completions; open: captured arrival times")
	f.StringVar(&opts.stalls, "stalls", "keep", "`keep|drop`: drop replays each host stall the workload found (a process at its depth that left its completions unreaped 1 ms or more, off any period) at its process's typical reaping delay; keep (default): as recorded")
	f.StringVar(&opts.work, "work", "auto", "`auto|fixed|timed`: fixed replays the captured bios once; timed cycles the processes still busy at the capture's end until its span has passed; auto: timed in a what-if whose change is known, fixed otherwise")
	f.StringVarP(&opts.out, "output", "o", "", "write the predicted events to `PREDICTED.arrow`")
	f.StringVar(&opts.results, "results", "", "also write the per-cgroup figures to `FILE.parquet` (one row per capture, scheduler and cgroup)")
	f.BoolVar(&opts.json, "json", false, "print the diff as JSON")
	f.BoolVar(&opts.tui, "tui", false, "open the terminal inspector on the result")
	f.BoolVar(&opts.listFeatures, "list-features", false, "list the scheduler's historical features and kernel presets")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the device model's random draws")
	f.IntVar(&opts.seeds, "seeds", 1, "also replay at the next N-1 seeds and report the predicted figures' min, median and max over all `N` (the prediction itself, -o, the report's other figures: --seed's)")
	f.IntVar(&opts.hz, "hz", 250, "the kernel's tick rate, where a model counts jiffies")
	addReportFlags(f, &opts.reports, "report", "")
	f.StringVar(&opts.recordedSched, "recorded-sched", "", "the scheduler the capture was recorded under, `NAME` (default: from a manifest.json beside it, or its messages; none when no request was inserted into a scheduler)")
	f.BoolVar(&opts.noCache, "no-cache", false, "calibrate afresh: neither read nor write the cache of fitted device models")
	f.BoolVar(&opts.allowPartial, "allow-incomplete", false, fmt.Sprintf("replay a capture even when more than %d%% of its requests never complete (their completions lost)", maxIncompletePct))
	opts.mf.register(f)
	return cmd
}

// parseSets splits --set NAME=VALUE pairs; queue/ and queue/iosched/
// prefixes are accepted and dropped.
func parseSets(sets []string) (map[string]string, error) {
	m := map[string]string{}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		k = replay.AttrName(k)
		if !ok || k == "" {
			return nil, usagef("invalid --set %q: want NAME=VALUE", s)
		}
		m[k] = strings.TrimSpace(v)
	}
	return m, nil
}

// parseFeatures splits --feature NAME=on|off pairs.
func parseFeatures(fs []string) (map[string]bool, error) {
	m := map[string]bool{}
	for _, s := range fs {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, usagef("invalid --feature %q: want NAME=on|off", s)
		}
		switch strings.ToLower(v) {
		case "on", "1", "true", "yes":
			m[k] = true
		case "off", "0", "false", "no":
			m[k] = false
		default:
			return nil, usagef("invalid --feature %q: the value must be on or off", s)
		}
	}
	return m, nil
}

// parseWeights resolves --weight CGROUP=W pairs to cgroup ids. A path
// resolves through the capture's known cgroups.
func parseWeights(ws []string, known map[uint64]string) (map[uint64]int, error) {
	m := map[uint64]int{}
	for _, s := range ws {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, usagef("invalid --weight %q: want CGROUP=W", s)
		}
		w, err := strconv.Atoi(v)
		if err != nil || w < 1 || w > 1000 {
			return nil, usagef("invalid --weight %q: the weight must be a whole number from 1 to 1000", s)
		}
		if id, err := strconv.ParseUint(k, 10, 64); err == nil {
			m[id] = w
			continue
		}
		found := false
		for id, p := range known {
			if p == k || strings.TrimPrefix(p, "/") == strings.TrimPrefix(k, "/") {
				m[id], found = w, true
			}
		}
		if !found {
			return nil, usagef("invalid --weight %q: the capture names no cgroup %q; give its numeric id", s, k)
		}
	}
	return m, nil
}

// queueAttrs are the --set names under queue/ that the engine models; the
// rest are the scheduler's tunables (queue/iosched/).
var queueAttrs = map[string]bool{"rotational": true, "nr_requests": true, "max_sectors_kb": true, "max_segments": true, "queue_depth": true, "wbt_lat_usec": true}

// modelOptions are the --set names that change what a model reports, not
// what it does (bfq's log level): setting them is no what-if.
var modelOptions = map[string]bool{"log": true}

// ioschedSets returns the --set names that are not queue attributes: what
// the scheduler model takes.
func ioschedSets(sets map[string]string) map[string]string {
	out := make(map[string]string, len(sets))
	for k, v := range sets {
		if !queueAttrs[k] {
			out[k] = v
		}
	}
	return out
}

// queueFor derives the modelled queue's settings from --set and the capture.
func queueFor(sets map[string]string, dev trace.Dev) (replay.Queue, error) {
	q := replay.Queue{Rotational: dev.Major() != 259}
	if v, ok := sets["rotational"]; ok {
		switch v {
		case "0":
			q.Rotational = false
		case "1":
			q.Rotational = true
		default:
			return q, usagef("invalid --set rotational=%s: want 0 or 1", v)
		}
	}
	if v, ok := sets["nr_requests"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 4 || n > maxQueueDepth {
			return q, usagef("invalid --set nr_requests=%s: want a whole number from 4 to %d (BLK_MQ_MAX_DEPTH)", v, maxQueueDepth)
		}
		q.NrRequests = n
	}
	if v, ok := sets["max_sectors_kb"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 4 {
			return q, usagef("invalid --set max_sectors_kb=%s: want a whole number of at least 4", v)
		}
		q.MaxSectors = uint32(n) * 2
	}
	if v, ok := sets["max_segments"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 65535 {
			return q, usagef("invalid --set max_segments=%s: want a whole number from 1 to 65535", v)
		}
		q.MaxSegments = n
	}
	if v, ok := sets["queue_depth"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxQueueDepth {
			return q, usagef("invalid --set queue_depth=%s: want a whole number from 1 to %d (BLK_MQ_MAX_DEPTH)", v, maxQueueDepth)
		}
		q.Depth = n
	}
	if v, ok := sets["wbt_lat_usec"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > 1<<40 {
			return q, usagef("invalid --set wbt_lat_usec=%s: want a whole number of microseconds (0: writeback throttling off)", v)
		}
		q.WBTLat = trace.Time(n) * 1000
	}
	return q, nil
}

// replayRun is the main job: replay, then diff.
func replayRun(ctx context.Context, ios *IOStreams, opts *replayOptions, model schedModel) error {
	start := time.Now()
	sets, err := parseSets(opts.sets)
	if err != nil {
		return err
	}
	features, err := parseFeatures(opts.features)
	if err != nil {
		return err
	}
	mode, err := replay.ParseMode(opts.mode)
	if err != nil {
		return usagef("invalid value for --mode: %v", err)
	}
	if opts.work != "auto" {
		if _, err := replay.ParseWork(opts.work); err != nil {
			return usagef("invalid value for --work: %v (or auto)", err)
		}
	}
	if _, err := replay.ParseStalls(opts.stalls); err != nil {
		return usagef("invalid value for --stalls: %v", err)
	}
	// The host table and a given device model are read before the
	// capture: a bad --host or --device fails at once.
	host, err := loadHost(opts.hostPath)
	if err != nil {
		return fmt.Errorf("--host: %w", err)
	}
	var given *device.Model
	if opts.devicePath != "" {
		if given, err = loadDeviceFile(opts.devicePath); err != nil {
			return fmt.Errorf("--device: %w", err)
		}
	}
	mctx, err := opts.mf.load(opts.input)
	if err != nil {
		return err
	}
	sets, setSrc, setNotes := mctx.replaySets(model, sets, opts.hz)
	if opts.kernel != "" && len(model.kernels) == 0 {
		return usagef("--kernel: the %s model has no kernel presets", model.name)
	}
	if err := checkHZ(opts.hz); err != nil {
		return err
	}
	if opts.seeds < 1 || opts.seeds > maxSeeds {
		return usagef("invalid value for --seeds: %d (1 to %d replays)", opts.seeds, maxSeeds)
	}

	if err := checkOptions(model, replay.Options{Set: ioschedSets(sets), Kernel: opts.kernel, Features: features, HZ: opts.hz}, replay.Queue{Rotational: true, Depth: 32, NrRequests: 256, MaxSectors: 2560}); err != nil {
		return err
	}

	// 1. The capture, read once: the real side (for the diff and the
	// calibration) and the workload (the bios per process, replayed).
	capt, err := loadCapture(ctx, ios, opts.input, opts.allowPartial)
	if err != nil {
		return err
	}
	realSide, meta, w := capt.Real, capt.Meta, capt.Workload
	meta.Cgroups = mctx.cgroupPaths(meta.Cgroups)
	weights, err := parseWeights(opts.weights, meta.Cgroups)
	if err != nil {
		return err
	}
	warnUnknownWeights(ios, opts.input, weights, realSide)
	weights, wSrc := mctx.replayWeights(weights)
	reportSources(ios.ErrOut, mctx, opts.schedFrom, model.name, append(setSrc, wSrc...), setNotes)
	ioprios, err := parseIOPrios(opts.ioprios)
	if err != nil {
		return err
	}
	ioprios, ioNotes := mctx.replayIOPrios(ioprios)
	for _, n := range ioNotes {
		fmt.Fprintf(ios.ErrOut, "tracesched: %s\n", n)
	}

	// 2. The device model.
	stop := heartbeat(ios, "calibrating the device model")
	restoreGC := phaseGC(arrayPhaseGCPercent, true)
	dm, fitNote, err := deviceModel(ios, opts, capt, sets["rotational"] == "0", given)
	restoreGC()
	stop()
	if err != nil {
		return err
	}

	// 3. The scheduler and queue.
	q, err := queueFor(sets, w.Dev)
	if err != nil {
		return err
	}
	if mctx != nil && mctx.dev != nil && mctx.dev.HWQueueDepth != nil {
		q.QueueDepth = *mctx.dev.HWQueueDepth // what the writeback throttle scales from
	}
	kernel := opts.kernel
	if kernel == "" {
		kernel = model.kernel
	}
	so := replay.Options{Set: ioschedSets(sets), Weights: weights, CgroupPaths: meta.Cgroups, Kernel: kernel, Features: features, HZ: opts.hz, IOPrio: ioprios}
	if model.name == "bfq" {
		// A BFQ capture shows the state its scheduler had run into
		// before tracing began (the auto-tuned max budget).
		so.Warm = bfq.WarmFrom(realSide.MessageSeq())
		if mb := so.Warm["max_budget"]; mb > 0 {
			fmt.Fprintf(ios.ErrOut, "tracesched: bfq starts as the capture's did: max_budget %d sectors (its first recalc_budg message)\n", mb)
		}
		given, err := parseBFQWarm(opts.bfqWarm)
		if err != nil {
			return err
		}
		if mb := given["max_budget"]; mb > 0 {
			if so.Warm["max_budget"] > 0 {
				fmt.Fprintf(ios.ErrOut, "tracesched: --bfq-warm max_budget=%d replaces the capture's\n", mb)
			} else {
				fmt.Fprintf(ios.ErrOut, "tracesched: bfq starts warm (--bfq-warm): max_budget %d sectors\n", mb)
			}
			if so.Warm == nil {
				so.Warm = map[string]int64{}
			}
			so.Warm["max_budget"] = mb
		}
	}
	// What the replay changes (the what-if), known before it runs: it
	// decides --work auto.
	var do diff.Options
	if err := whatIfOptions(ios, opts, mctx, realSide, model.name, kernel, weights, sets, &do); err != nil {
		return err
	}
	if model.name == "bfq" && len(do.Changes) > 0 && so.Warm["max_budget"] == 0 {
		// A BFQ just started: what it had tuned itself to before the
		// capture decides budgets and weight raising, and a capture
		// under another scheduler does not show it.
		fmt.Fprintf(ios.ErrOut, "tracesched: bfq starts as just started (max_budget %d sectors until it tunes itself); one that had run on this device had tuned it: --bfq-warm max_budget=N starts there (tracesched stats of a BFQ capture of the device prints N)\n", bfq.DefaultMaxBudget)
		do.Assumed = append(do.Assumed, fmt.Sprintf("bfq starts as just started (max_budget %d sectors until it tunes itself; --bfq-warm gives another)", bfq.DefaultMaxBudget))
	}
	// The queues' own state (bfq.WarmFrom: processes whose queues existed
	// before the trace) is the recorded run's, kept only when validating.
	queues := 0
	for k := range so.Warm {
		if strings.HasPrefix(k, "pid.") {
			if len(do.Changes) > 0 {
				delete(so.Warm, k)
			} else {
				queues++
			}
		}
	}
	if queues > 0 && so.Features["warm-queues"] {
		fmt.Fprintf(ios.ErrOut, "tracesched: bfq starts %d values of queues that existed before the trace as its first messages show them\n", queues)
	}
	work := replay.WorkFixed
	switch {
	case opts.work == "auto" && knownChange(do.Changes) && mode == replay.Closed:
		work = replay.WorkTimed
	case opts.work != "auto":
		work, _ = replay.ParseWork(opts.work)
	}
	stalls, _ := replay.ParseStalls(opts.stalls)
	if mode != replay.Closed {
		stalls = replay.StallsKeep
	}
	if stalls == replay.StallsDrop {
		if sc := w.Stalls(); sc.Host > 0 {
			fmt.Fprintf(ios.ErrOut, "tracesched: %d host stalls (%.1f ms of the capture's gaps) replayed at their processes' typical reaping delays (--stalls drop); %d periodic stalls kept\n",
				sc.Host, sc.HostTime.Seconds()*1e3, sc.Periodic)
		}
	}
	cfg := replay.Config{
		NewScheduler: func(h replay.Host) (replay.Scheduler, error) { return model.new(h, so) },
		Device:       dm.NewDevice(opts.seed),
		Queue:        q,
		Mode:         mode,
		Work:         work,
		Stalls:       stalls,
	}
	if mode == replay.Closed {
		cfg.Submit = hostModel(ios, host, w, do.RecordedScheduler, model.name, schedMessages(realSide), &do)
	}

	// 4. Replay, keeping the prediction for the diff and, with -o, in Arrow.
	pmeta := trace.Meta{Source: "replay", Kernel: kernel, Devices: []trace.Dev{w.Dev}, Cgroups: meta.Cgroups,
		Extra: map[string]string{"scheduler": model.name, "mode": mode.String(), "work": work.String(), "stalls": stalls.String(), "input": opts.input}}
	for _, k := range slices.Sorted(maps.Keys(sets)) {
		pmeta.Extra["set."+k] = sets[k]
	}
	pmeta.Extra["command"] = report.ShellQuote(replayCommand(opts, model, weights))
	var ew *arrowfile.EventWriter
	var ef *atomicFile
	if opts.out != "" {
		if ef, err = createAtomic(ctx, ios, opts.out); err != nil {
			return err
		}
		defer ef.Abort()
		if ew, err = arrowfile.NewEventWriter(ef, pmeta); err != nil {
			return err
		}
	}
	var write func(*trace.Event) error
	if ew != nil {
		write = ew.Write
	}
	sink := cancellingSink(ctx, write)
	prog := newProgress(ios, "replay")
	restoreGC = phaseGC(replayPhaseGCPercent, false)
	predSide, res, err := capt.Replay(cfg, pmeta, sink, func() { prog.Add(1) })
	prog.Done()
	restoreGC()
	if err != nil {
		return fmt.Errorf("replaying %s through %s: %w", opts.input, model.name, err)
	}
	if a := releasesAssumed(res.Releases); a != "" && len(do.Changes) > 0 {
		do.Assumed = append(do.Assumed, a)
	}
	// The workload's bios are not needed past the replays: let them go.
	dev := w.Dev
	if opts.seeds == 1 {
		capt.Workload, w = nil, nil
	}
	if ew != nil {
		if err := ew.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", opts.out, err)
		}
	}

	// 5. The diff.
	idle, idleOff := diff.ThinkOptions(sets)
	rec, changes, assumed := do.RecordedScheduler, do.Changes, do.Assumed
	do = thinkOptions(diff.Options{Weights: weights, SliceIdle: idle, IdleOff: idleOff}, pmeta)
	do.RecordedScheduler, do.Changes, do.Assumed = rec, changes, assumed
	// The device model's coverage of the prediction, before the diff, read
	// from the predicted side's table one request at a time.
	defer phaseGC(arrayPhaseGCPercent, false)()
	var extrapolates []string
	if dm != nil {
		extrapolates = coverageWarnings(ios, dm, opts.devicePath, pipeline.SideRequests(predSide, dev))
	}
	result := diff.Compare(realSide, predSide, do)
	result.DeviceExtrapolation = append([]string{}, extrapolates...)
	if opts.seeds > 1 {
		if result.Seeds, err = replaySeeds(ctx, ios, capt, cfg, dm, pmeta, realSide, do, result, opts.seed, opts.seeds); err != nil {
			return fmt.Errorf("replaying %s through %s: %w", opts.input, model.name, err)
		}
		capt.Workload, w = nil, nil
	}
	name := model.name
	if kernel != "" {
		name += " (kernel " + kernel + ")"
	}
	// The prediction is committed once everything it depends on succeeded.
	if ef != nil {
		if err := ef.Commit(); err != nil {
			return err
		}
	}
	fmt.Fprintf(ios.ErrOut, "tracesched: replayed %d bios, %d requests through %s, %s loop, %s work, %s, in %.2f s; device %s\n",
		res.Bios, res.Requests, name, mode, work, queueText(res.Queue), time.Since(start).Seconds(), fitNote)
	explainOpenSpan(ios, mode, res, result.WallSeconds, result.SimulatedSeconds)
	if err := opts.reports.write(ctx, ios, result, replayReportRun(opts, model, result, res.Queue, fitNote)); err != nil {
		return err
	}
	if opts.results != "" {
		run := resultsRun{Capture: opts.input, Scheduler: model.name, Kernel: kernel, Mode: mode.String(), Weights: weights}
		if err := writeResultsFile(ctx, ios, opts.results, run, result); err != nil {
			return err
		}
	}
	switch {
	case opts.json:
		return result.WriteJSON(ios.Out)
	case opts.tui:
		return runTUI(ctx, ios, result, tui.RunInfo{Inputs: []string{opts.input}, Scheduler: model.name, Kernel: kernel, Tunables: sets, Weights: weights, Device: fitNote})
	}
	return result.WriteText(ios.Out, termWidth(ios))
}

// loadSide reads a whole input into a diff side.
func loadSide(ctx context.Context, ios *IOStreams, name string) (*diff.Side, trace.Meta, error) {
	side := diff.NewSide(trace.Meta{})
	meta, diag, err := readInput(ctx, ios, name, "reading "+name, func(e *trace.Event) error {
		side.Add(e)
		return nil
	})
	if err != nil {
		return nil, trace.Meta{}, err
	}
	side.Meta = meta
	side.Finish()
	warnIncomplete(ios, name, diag, countIncomplete(side), uint64(side.NumRequests()))
	return side, meta, nil
}

// loadCapture reads an input once into a pipeline.Capture, with progress
// and the reader's diagnostics on stderr; it refuses a capture more than
// maxIncompletePct of whose requests never complete, unless allowPartial.
func loadCapture(ctx context.Context, ios *IOStreams, name string, allowPartial bool) (*pipeline.Capture, error) {
	l := pipeline.NewLoader()
	meta, diag, err := readInput(ctx, ios, name, "reading "+name, func(e *trace.Event) error {
		l.Add(e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	c, err := l.Finish(meta)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	incomplete, total := countIncomplete(c.Real), uint64(c.Real.NumRequests())
	warnIncomplete(ios, name, diag, incomplete, total)
	if err := checkComplete(name, incomplete, total, allowPartial); err != nil {
		return nil, err
	}
	return c, nil
}

// loadDeviceFile reads a device model file (--device).
func loadDeviceFile(path string) (*device.Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := device.Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// deviceModel returns given (the --device model, read by loadDeviceFile)
// or calibrates from the capture's requests on the workload's device,
// through the cache of fitted models unless --no-cache (a cache that
// cannot be used is skipped with a note on stderr). notRotational (--set
// rotational=0, or the manifest's) skips the rotational fit.
func deviceModel(ios *IOStreams, opts *replayOptions, c *pipeline.Capture, notRotational bool, given *device.Model) (*device.Model, string, error) {
	if given != nil {
		return given, fmt.Sprintf("%s from %s", given.Kind, opts.devicePath), nil
	}
	var cache *pipeline.Cache
	if !opts.noCache {
		var err error
		if cache, err = pipeline.DefaultCache(); err != nil {
			fmt.Fprintf(ios.ErrOut, "tracesched: no cache of device models (%v); calibrating\n", err)
			cache = nil
		}
	}
	dev := c.Workload.Dev
	copts := device.CalibrateOptions{Seed: opts.seed, NotRotational: notRotational}
	cal, err := pipeline.CalibrateSeq(c.DeviceRequestSeq(), copts, cache)
	if err != nil {
		return nil, "", fmt.Errorf("calibrating a device model from %s (device %s): %w; give one with --device", opts.input, dev, err)
	}
	if cal.CacheErr != nil {
		fmt.Fprintf(ios.ErrOut, "tracesched: the fitted device model was not cached: %v\n", cal.CacheErr)
	}
	fit := cal.Fit
	opts.fit = fit
	if cal.Model.Coverage == nil {
		cal.Model.Coverage = device.CoverageOfSeq(c.DeviceRequestSeq()) // a cache entry without it
	}
	// The note goes into the results, which must not depend on the cache:
	// where the model came from is said on stderr only.
	how := "calibrated"
	if cal.Cached {
		fmt.Fprintf(ios.ErrOut, "tracesched: device model fitted earlier to this capture, from the cache (--no-cache refits)\n")
	}
	return cal.Model, fmt.Sprintf("%s %s (D2C demerit %.1f%% of mean, cross-validated %.1f%%)", fit.Kind, how, 100*fit.DemeritFraction, 100*fit.CV.DemeritFraction), nil
}

func queueText(q replay.Queue) string {
	rot := "non-rotational"
	if q.Rotational {
		rot = "rotational"
	}
	return fmt.Sprintf("%s, depth %d, nr_requests %d", rot, q.Depth, q.NrRequests)
}

// parseIOPrios reads --ioprio PID=CLASS pairs (replay.ParseIOPrio).
func parseIOPrios(args []string) (map[uint32]replay.IOPrio, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := map[uint32]replay.IOPrio{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		pid, err := strconv.ParseUint(strings.TrimSpace(k), 10, 32)
		if !ok || err != nil {
			return nil, usagef("invalid --ioprio %q: want PID=rt/N|be/N|idle", a)
		}
		p, err := replay.ParseIOPrio(v)
		if err != nil {
			return nil, usagef("invalid --ioprio %q: %v", a, err)
		}
		out[uint32(pid)] = p
	}
	return out, nil
}

// parseBFQWarm parses --bfq-warm NAME=VALUE arguments: max_budget, in
// sectors, 1 to bfq's largest budget. A what-if from a capture without
// BFQ messages starts BFQ as bfq_init_queue does (peak rate 2/3 of the
// reference rate: a 10.5 s weight-raising period on a rotational device,
// budgets of 16384 sectors); a BFQ that ran on the device before the
// trace began had tuned itself (fs-bfq-fsync-vs-seqread began at
// bfq_max_budget 121984: 3 s of weight raising, 7624-sector budgets for
// weight-raised queues). Nothing in a mq-deadline capture shows that
// state, so it is given, not guessed.
func parseBFQWarm(args []string) (map[string]int64, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := map[string]int64{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if !ok || strings.TrimSpace(k) != "max_budget" || err != nil || n < 1 || n > 1<<30 {
			return nil, usagef("invalid --bfq-warm %q: want max_budget=SECTORS (1..%d)", a, 1<<30)
		}
		out["max_budget"] = n
	}
	return out, nil
}

// hostTable is a --host table and where it came from; nil for --host off.
type hostTable struct {
	costs replay.HostCosts
	from  string // "the built-in table" or the file's path
}

// loadHost reads the table of --host: "default" (the flag's default) is
// replay.DefaultHostCosts, "off" none (nil), anything else a HOST.json.
func loadHost(path string) (*hostTable, error) {
	switch path {
	case "off":
		return nil, nil
	case "default":
		return &hostTable{replay.DefaultHostCosts(), "the built-in table"}, nil
	}
	h, err := replay.ReadHostCosts(path)
	if err != nil {
		return nil, err
	}
	return &hostTable{h, path}, nil
}

// cancellingSink is a replay's event sink that hands each predicted event
// to write (nil: none) and stops the replay once ctx is done (a signal),
// checked every ctxCheckEvents events.
func cancellingSink(ctx context.Context, write func(*trace.Event) error) func(*trace.Event) error {
	var emitted uint32
	return func(e *trace.Event) error {
		if emitted++; emitted%ctxCheckEvents == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if write != nil {
			return write(e)
		}
		return nil
	}
}

// maxSeeds bounds --seeds.
const maxSeeds = 100

// replaySeeds replays the workload of capt again at seeds seed+1 ..
// seed+n-1 (cfg as the first replay's but for the device's draws), diffs
// each prediction against real with do, and returns the predicted figures'
// spread over those and first, the replay at seed. Each prediction is
// dropped once diffed.
func replaySeeds(ctx context.Context, ios *IOStreams, capt *pipeline.Capture, cfg replay.Config, dm *device.Model, meta trace.Meta,
	real *diff.Side, do diff.Options, first *diff.Result, seed uint64, n int) (*diff.SeedSpread, error) {
	seeds, rs := []uint64{seed}, []*diff.Result{first}
	sink := cancellingSink(ctx, nil)
	for k := 1; k < n; k++ {
		s := seed + uint64(k)
		fmt.Fprintf(ios.ErrOut, "tracesched: replaying again at seed %d (%d of %d, --seeds)\n", s, k+1, n)
		c := cfg
		c.Device = dm.NewDevice(s)
		pred, _, err := capt.Replay(c, meta, sink, nil)
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", s, err)
		}
		r := diff.Compare(real, pred, do)
		r.RealSide, r.PredSide = nil, nil
		seeds, rs = append(seeds, s), append(rs, r)
	}
	return diff.Spread(seeds, rs), nil
}

// maxReleasesShown is the most process pairs releasesAssumed names.
const maxReleasesShown = 3

// releasesAssumed describes, for a what-if's "assumed:" line, the
// cross-process releases the replay followed at their captured delays
// (replay.Release): the host's wake-up times of an fsync -> journal ->
// fsync chain, which the prediction keeps as the capture showed them under
// its scheduler. "" when there were none.
func releasesAssumed(rs []replay.Release) string {
	if len(rs) == 0 {
		return ""
	}
	name := func(pid uint32, comm string) string {
		if comm == "" {
			return fmt.Sprint(pid)
		}
		return fmt.Sprintf("%s %d", trace.Printable(comm), pid)
	}
	var parts []string
	for i, r := range rs {
		if i == maxReleasesShown {
			more := fmt.Sprintf("%d more pairs", len(rs)-i)
			if len(rs)-i == 1 {
				more = "1 more pair"
			}
			parts = append(parts, more)
			break
		}
		parts = append(parts, fmt.Sprintf("%s after %s x%d (p50 %.3f ms, mean %.3f ms)",
			name(r.PID, r.Comm), name(r.By, r.ByComm), r.Bios, r.DelayP50.Seconds()*1e3, r.DelayMean.Seconds()*1e3))
	}
	return "cross-process releases at the capture's delays, from the releasing completion to the released bio's Q (the host's wake-up time, not the scheduler's): " + strings.Join(parts, "; ")
}

// hostModel returns the host model of a closed-loop replay
// (replay.Config.Submit): the table ht (nil: --host off, none) applied to
// the workload, recorded under recorded (with its messages traced when
// messages) and replayed through sched; none when they are the same or
// recorded is unknown (""), as in a validation. In a what-if it says on
// stderr what it uses, or why it uses none, and adds what it uses to
// do.Assumed (the report's "assumed:" line, change.assumed in JSON).
func hostModel(ios *IOStreams, ht *hostTable, w *replay.Workload, recorded, sched string, messages bool, do *diff.Options) *replay.SubmitCost {
	if ht == nil {
		return nil
	}
	h, from := ht.costs, ht.from
	if recorded == "" && len(do.Changes) > 0 {
		fmt.Fprintf(ios.ErrOut, "tracesched: no host model: the recording scheduler is unknown (--recorded-sched NAME gives it)\n")
		return nil
	}
	if recorded == "" || len(do.Changes) == 0 {
		return nil // a validation: the capture's gaps carry its scheduler's cost
	}
	if h.KeepsCost(recorded, sched, messages) {
		return nil // other weights or tunables, the scheduler at the capture's cost
	}
	c, ok, why := h.SubmitCost(w, recorded, sched, messages)
	if !ok {
		fmt.Fprintf(ios.ErrOut, "tracesched: no host model: %s\n", why)
		return nil
	}
	traced := ""
	if strings.HasSuffix(h.SourceKey(recorded, messages), replay.MessagesSuffix) {
		traced = " with its messages traced"
	}
	fmt.Fprintf(ios.ErrOut, "tracesched: host: a submission holds its CPU %.1fµs under %s%s (the capture's back-to-back Q-to-Q median, %d gaps), %.1fµs under %s (%s; --host off: none)\n",
		float64(c.Source)/1e3, recorded, traced, w.SubmitGaps, float64(c.Target)/1e3, sched, from)
	assumed := fmt.Sprintf("host model: a submission holds its CPU %.1f us under %s%s (the capture's), %.1f us under %s (%s)",
		float64(c.Source)/1e3, recorded, traced, float64(c.Target)/1e3, sched, from)
	if c.CompleteTarget > 0 {
		fmt.Fprintf(ios.ErrOut, "tracesched: host: a completion holds its CPU %.1fµs under %s%s (the capture's back-to-back C-to-C mean, %d gaps), %.1fµs under %s\n",
			float64(c.CompleteSource)/1e3, recorded, traced, w.CompleteGaps, float64(c.CompleteTarget)/1e3, sched)
		assumed += fmt.Sprintf("; a completion %.1f us under %s, %.1f us under %s",
			float64(c.CompleteSource)/1e3, recorded, float64(c.CompleteTarget)/1e3, sched)
	}
	do.Assumed = append(do.Assumed, assumed)
	return &c
}
