package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tracesched/tracesched/manifest"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/stats"
	"github.com/tracesched/tracesched/trace"
)

// manifestFlags are --manifest and --no-manifest of the commands that
// read a capture.
type manifestFlags struct {
	path string
	off  bool
}

func (f *manifestFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.path, "manifest", "", "the capture's `manifest.json` (default: the one beside INPUT, if any)")
	fs.BoolVar(&f.off, "no-manifest", false, "ignore the manifest beside INPUT")
}

// captureContext is what a capture's manifest says about it.
type captureContext struct {
	path  string
	given bool // --manifest named it
	m     *manifest.Manifest
	dev   *manifest.Device
}

// load finds and reads the manifest of input: --manifest, else
// manifest.json beside input. It returns nil without error when there is
// none (or --no-manifest).
func (f *manifestFlags) load(input string) (*captureContext, error) {
	if f.off {
		return nil, nil
	}
	p := f.path
	if p == "" {
		p = manifest.Beside(input)
	}
	if p == "" {
		return embeddedManifest(input), nil
	}
	m, err := manifest.Load(p)
	if err != nil {
		return nil, err
	}
	name := strings.SplitN(filepath.Base(input), ".blktrace.", 2)[0]
	return &captureContext{path: p, given: f.path != "", m: m, dev: m.DeviceFor(name, 0)}, nil
}

// embeddedManifest returns the manifest `convert` stored in an Arrow
// file's metadata, or nil.
func embeddedManifest(input string) *captureContext {
	f, err := os.Open(input)
	if err != nil {
		return nil
	}
	head := make([]byte, len(arrowMagic))
	_, err = io.ReadFull(f, head)
	f.Close()
	if err != nil || !bytes.Equal(head, arrowMagic) {
		return nil
	}
	src, err := openPath(input)
	if err != nil {
		return nil
	}
	defer src.Close()
	js := src.Meta().Extra["manifest"]
	if js == "" {
		return nil
	}
	var m manifest.Manifest
	if json.Unmarshal([]byte(js), &m) != nil {
		return nil
	}
	return &captureContext{path: input + " (manifest stored by convert)", m: &m, dev: m.DeviceFor("", 0)}
}

// scheduler returns the recorded scheduler when a model of it exists.
func (c *captureContext) scheduler() string {
	if c == nil {
		return ""
	}
	if _, err := findSched(c.m.Scheduler); err != nil {
		return ""
	}
	return c.m.Scheduler
}

// setSource is one replay setting and where it came from.
type setSource struct {
	name, value, from string
}

// aliases are tunables that set the same thing in two units: an explicit
// flag for one drops both from the manifest, and the manifest's coarser
// one is dropped when it has the finer.
var aliases = map[string]string{"slice_idle": "slice_idle_us", "slice_idle_us": "slice_idle", "group_idle": "group_idle_us", "group_idle_us": "group_idle"}

// deviceAttrs are the queue/ attributes a manifest gives for any scheduler
// (properties of the device); nr_requests belongs to the recorded
// scheduler (the kernel sizes it per scheduler).
var deviceAttrs = []string{"rotational", "max_sectors_kb"}

// replaySets merges the manifest's settings under explicit --set values:
// the device's rotational and max_sectors_kb always, nr_requests and every
// queue/iosched tunable when the model is the recorded scheduler's. A
// tunable the model refuses is left out with a note.
func (c *captureContext) replaySets(model schedModel, explicit map[string]string, hz int) (map[string]string, []setSource, []string) {
	out := make(map[string]string, len(explicit))
	var src []setSource
	for k, v := range explicit {
		out[k] = v
		src = append(src, setSource{k, v, "--set"})
	}
	if c == nil {
		return out, src, nil
	}
	var notes []string
	take := func(k, v string) {
		if _, ok := out[k]; ok {
			return
		}
		if a, ok := aliases[k]; ok {
			if _, ok := explicit[a]; ok {
				return
			}
		}
		out[k] = v
		src = append(src, setSource{k, v, "manifest"})
	}
	q := c.dev.Queue
	num := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	}
	attrs := map[string]string{"rotational": num(c.dev.Rotational), "max_sectors_kb": num(c.dev.MaxSectorsKB), "nr_requests": num(c.dev.NrRequests)}
	for k, v := range attrs {
		if v == "" && q != nil {
			attrs[k] = q[k]
		}
	}
	for _, k := range deviceAttrs {
		if attrs[k] != "" {
			take(k, attrs[k])
		}
	}
	if model.name != c.m.Scheduler {
		if c.m.Scheduler != "" {
			notes = append(notes, fmt.Sprintf("the capture ran under %s: its tunables are not applied to the %s model", c.m.Scheduler, model.name))
		}
		return out, src, notes
	}
	if attrs["nr_requests"] != "" {
		take("nr_requests", attrs["nr_requests"])
	}
	tun := c.dev.Tunables(c.m)
	for _, k := range manifest.SortedKeys(tun) {
		if a, ok := aliases[k]; ok && strings.HasSuffix(a, "_us") {
			if _, ok := tun[a]; ok {
				continue // the _us twin says it exactly
			}
		}
		v := tun[k]
		if def, ok := kernelDefault(model.name, k, hz, attrs["nr_requests"]); ok && def == v {
			continue // the kernel's default: the model starts there too
		}
		if err := checkOptions(model, replay.Options{Set: map[string]string{k: v}}, replay.Queue{Rotational: true, Depth: 32, NrRequests: 256, MaxSectors: 2560}); err != nil {
			notes = append(notes, fmt.Sprintf("manifest tunable %s=%s not applied: %v", k, v, err))
			continue
		}
		take(k, v)
	}
	return out, src, notes
}

// kernelDefault is a tunable's value as a 6.18 kernel shows it before anyone
// wrote it (block/bfq-iosched.c, block/mq-deadline.c). A manifest value
// equal to it is not passed to the model: writing a tunable is not neutral
// (bfq's timeout_sync and max_budget stores recompute max_budget from the
// current peak rate), and the kernel never wrote it either.
func kernelDefault(sched, name string, hz int, nrRequests string) (string, bool) {
	switch sched {
	case "bfq":
		switch name {
		case "timeout_sync": // jiffies_to_msecs(HZ / 8)
			j := int64(hz / 8)
			return strconv.FormatInt((j*1000+int64(hz)-1)/int64(hz), 10), hz > 0
		}
		v, ok := map[string]string{"back_seek_max": "16384", "back_seek_penalty": "2", "fifo_expire_async": "250",
			"fifo_expire_sync": "125", "low_latency": "1", "max_budget": "0", "slice_idle": "8", "slice_idle_us": "8000",
			"strict_guarantees": "0"}[name]
		return v, ok
	case "mq-deadline":
		if name == "async_depth" {
			return nrRequests, nrRequests != ""
		}
		v, ok := map[string]string{"read_expire": "500", "write_expire": "5000", "writes_starved": "2", "front_merges": "1",
			"fifo_batch": "16", "prio_aging_expire": "10000"}[name]
		return v, ok
	}
	return "", false
}

// replayWeights merges the manifest's cgroup weights under explicit ones.
func (c *captureContext) replayWeights(explicit map[uint64]int) (map[uint64]int, []setSource) {
	out := make(map[uint64]int, len(explicit))
	var src []setSource
	for id, w := range explicit {
		out[id] = w
		src = append(src, setSource{"weight " + strconv.FormatUint(id, 10), strconv.Itoa(w), "--weight"})
	}
	if c == nil {
		return out, src
	}
	for id, w := range c.m.Weights() {
		if _, ok := out[id]; ok || w < 1 || w > 1000 {
			continue
		}
		out[id] = w
		src = append(src, setSource{"weight " + strconv.FormatUint(id, 10), strconv.Itoa(w), "manifest"})
	}
	return out, src
}

// cgroupPaths adds the manifest's cgroup paths to those the capture names.
func (c *captureContext) cgroupPaths(known map[uint64]string) map[uint64]string {
	if c == nil {
		return known
	}
	out := make(map[uint64]string, len(known))
	for id, p := range known {
		out[id] = p
	}
	for id, p := range c.m.Paths() {
		if _, ok := out[id]; !ok {
			out[id] = p
		}
	}
	return out
}

// reportSources tells stderr which settings came from where.
func reportSources(w io.Writer, c *captureContext, schedFrom string, model string, src []setSource, notes []string) {
	if c != nil {
		fmt.Fprintf(w, "tracesched: manifest %s: %s, kernel %s, %s %s\n", c.path, orDash(c.m.Scheduler), orDash(c.m.Host.KernelRelease), orDash(c.dev.Name), orDash(c.dev.MajorMinor))
	}
	by := map[string][]string{}
	for _, s := range src {
		by[s.from] = append(by[s.from], s.name+"="+s.value)
	}
	var parts []string
	parts = append(parts, fmt.Sprintf("scheduler %s (%s)", model, schedFrom))
	for _, from := range []string{"--set", "--weight", "manifest"} {
		if l := by[from]; len(l) > 0 {
			sort.Strings(l)
			parts = append(parts, fmt.Sprintf("%s: %s", from, strings.Join(l, " ")))
		}
	}
	parts = append(parts, "everything else: the model's defaults")
	fmt.Fprintf(w, "tracesched: settings: %s\n", strings.Join(parts, "; "))
	for _, n := range notes {
		fmt.Fprintf(w, "tracesched: %s\n", n)
	}
	if c != nil {
		warnManifestIncomplete(w, c)
	}
}

// replayIOPrios returns the I/O priority of each process: explicit
// (--ioprio) where given, else what the manifest recorded with
// ioprio_get: a class set with ionice as it is, class none derived from
// the recorded nice value as the kernel does (task_nice_ioprio; the
// scheduling policy is not recorded, so never RT or IDLE from it). It
// returns notes for stderr naming the priorities taken from the manifest
// that differ from the default be/4.
func (c *captureContext) replayIOPrios(explicit map[uint32]replay.IOPrio) (map[uint32]replay.IOPrio, []string) {
	if c == nil {
		return explicit, nil
	}
	out := make(map[uint32]replay.IOPrio, len(explicit))
	for pid, p := range explicit {
		out[pid] = p
	}
	var taken []string
	for _, p := range c.m.Processes {
		if p.IOPrio == nil || p.PID <= 0 {
			continue
		}
		pid := uint32(p.PID)
		if _, ok := explicit[pid]; ok {
			continue
		}
		// IOPRIO_PRIO_CLASS(ioprio) = ioprio >> 13, IOPRIO_PRIO_DATA = ioprio & 0x1fff.
		class, level := replay.IOPrioClass(*p.IOPrio>>13), *p.IOPrio&0x1fff
		var prio replay.IOPrio
		switch {
		case class == replay.IOPrioNone && p.Nice != nil:
			prio = replay.NiceIOPrio(*p.Nice, false, false)
		case class == replay.IOPrioNone:
			continue
		case class <= replay.IOPrioIdle && level <= 7:
			prio = replay.IOPrio{Class: class, Level: uint8(level)}
		default:
			continue // not a priority the kernel hands out
		}
		out[pid] = prio
		if prio != (replay.IOPrio{Class: replay.IOPrioBE, Level: 4}) {
			taken = append(taken, fmt.Sprintf("%d=%s", pid, prio))
		}
	}
	if len(taken) == 0 {
		return out, nil
	}
	sort.Strings(taken)
	return out, []string{fmt.Sprintf("ioprio from the manifest: %s (BFQ models it; the other models ignore priorities)", strings.Join(taken, " "))}
}

func nonDefaultIOPrios(m *manifest.Manifest) int {
	n := 0
	for _, p := range m.Processes {
		if p.IOPrio != nil && *p.IOPrio != 0 {
			n++
		}
	}
	return n
}

// warnManifestIncomplete says on stderr when the manifest marks the capture
// partial or incomplete.
func warnManifestIncomplete(w io.Writer, c *captureContext) {
	if c == nil {
		return
	}
	if bad, reasons := c.m.Incomplete(); bad {
		fmt.Fprintf(w, "tracesched: WARNING: %s marks the capture incomplete: %s\n", c.path, strings.Join(reasons, "; "))
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeContext renders the manifest for `stats`.
func writeContext(w io.Writer, c *captureContext) {
	if c == nil {
		return
	}
	m, d := c.m, c.dev
	where := "the manifest beside the input"
	if c.given {
		where = c.path
	}
	fmt.Fprintf(w, "\ncapture context (%s)\n", where)
	fmt.Fprintf(w, "kernel %s, %d CPUs; recorded by %s\n", orDash(m.Host.KernelRelease), m.Host.NCPUs, orDash(toolName(m)))
	rot := "-"
	if d.Rotational != nil {
		rot = strconv.Itoa(*d.Rotational)
	}
	fmt.Fprintf(w, "device %s %s, rotational %s, nr_requests %s, hw queues %s x depth %s, max_sectors_kb %s, logical block %s, write cache %s\n",
		orDash(d.Name), orDash(d.MajorMinor), rot, intText(d.NrRequests), intText(d.NrHWQueues), intText(d.HWQueueDepth),
		intText(d.MaxSectorsKB), intText(d.LogicalBlockSize), orDash(d.WriteCache))
	if d.Model != "" || d.Driver != "" {
		fmt.Fprintf(w, "model %s, driver %s\n", orDash(d.Model), orDash(d.Driver))
	}
	tun := d.Tunables(m)
	var kv []string
	for _, k := range manifest.SortedKeys(tun) {
		kv = append(kv, k+"="+tun[k])
	}
	fmt.Fprintf(w, "scheduler %s: %s\n", orDash(m.Scheduler), strings.Join(kv, " "))
	if len(m.TunablesRequested) > 0 {
		fmt.Fprintf(w, "changed from the defaults before recording: %s\n", strings.Join(m.TunablesRequested, " "))
	}
	for _, cg := range m.Cgroups {
		wt := "-"
		if cg.BFQWeight != nil {
			wt = strconv.Itoa(*cg.BFQWeight)
		}
		extra := ""
		if cg.IOWeight != "" {
			extra += ", io.weight " + cg.IOWeight
		}
		if len(cg.IOMax) > 0 {
			extra += ", io.max " + strings.Join(cg.IOMax, "; ")
		}
		fmt.Fprintf(w, "cgroup %d %s: bfq weight %s%s\n", cg.ID, orDash(cg.Path), wt, extra)
	}
	if n := nonDefaultIOPrios(m); n > 0 {
		fmt.Fprintf(w, "processes with a non-default ioprio: %d of %d recorded\n", n, len(m.Processes))
	}
	switch bad, reasons := m.Incomplete(); {
	case bad:
		fmt.Fprintf(w, "INCOMPLETE: %s\n", strings.Join(reasons, "; "))
	case m.TraceComplete != nil && *m.TraceComplete:
		checks := 0
		if m.Completeness != nil {
			checks = m.Completeness.Checks
		}
		fmt.Fprintf(w, "complete: %d counts match the kernel's counters\n", checks)
	default:
		fmt.Fprintf(w, "completeness not checked (no kernel counters in the manifest)\n")
	}
}

func toolName(m *manifest.Manifest) string {
	if m.Tool != "" {
		return m.Tool
	}
	return "the capture rig"
}

func intText(p *int) string {
	if p == nil {
		return "-"
	}
	return strconv.Itoa(*p)
}

// manifestExtra puts the manifest into an Arrow file's metadata, so a
// converted capture keeps its context.
func (c *captureContext) manifestExtra(meta trace.Meta) trace.Meta {
	if c == nil {
		return meta
	}
	meta.Cgroups = c.cgroupPaths(meta.Cgroups)
	b, err := json.Marshal(c.m)
	if err != nil {
		return meta
	}
	ex := make(map[string]string, len(meta.Extra)+1)
	for k, v := range meta.Extra {
		ex[k] = v
	}
	ex["manifest"] = string(b)
	meta.Extra = ex
	return meta
}

// recordedSched is the scheduler input's manifest names, when it has a
// model ("" otherwise): replay's default for --sched.
func recordedSched(f *manifestFlags, input string) string {
	c, err := f.load(input)
	if err != nil {
		return ""
	}
	return c.scheduler()
}

// fillCgroupPaths names the summary's cgroups from the manifest where the
// capture does not.
func fillCgroupPaths(s *stats.Summary, c *captureContext) {
	if c == nil {
		return
	}
	paths := c.m.Paths()
	for i := range s.Cgroups {
		if s.Cgroups[i].Path == "" {
			s.Cgroups[i].Path = paths[s.Cgroups[i].ID]
		}
	}
}
