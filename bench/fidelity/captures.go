package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

// capture is one capture of ../shared/captures/{recorded,recorded-fs,small}
// or of a -captures directory.
type capture struct {
	Name  string // directory name, also the blktrace set's name
	Group string // "recorded", "recorded-fs", "small" or groupExtra
	Dir   string // the directory holding the capture's directory
	Base  string // the blktrace set: DIR/NAME/NAME (NAME.blktrace.N.zst beside it)
	Man   manifest
}

// manifest holds what the rig's manifest.json says that a replay needs.
type manifest struct {
	Scheduler         string         `json:"scheduler"`
	IoschedTunables   map[string]any `json:"iosched_tunables"`
	TunablesRequested []string       `json:"tunables_requested"`
	Device            struct {
		Rotational   *int `json:"rotational"`
		NrRequests   int  `json:"nr_requests"`
		WBTLatUsec   *int `json:"wbt_lat_usec"`
		HWQueueDepth *int `json:"hw_queue_depth"`
	} `json:"device"`
	Cgroups []struct {
		ID       uint64 `json:"cgroup_id"`
		Path     string `json:"path"`
		Weight   *int   `json:"bfq_weight"`
		Messages int    `json:"trace_messages"`
	} `json:"cgroups"`
	TraceComplete *bool `json:"trace_complete"`
	Completeness  struct {
		Problems []string `json:"problems"`
	} `json:"completeness"`
	HostLoad struct {
		Loadavg map[string]string `json:"loadavg"`
	} `json:"host_load"`
	wbt bool // -wbt: queue takes wbt_lat_usec
	// bfqFeatures are -bfq-feature's flips (replay.Options.Features), given
	// to every replay through the BFQ model; nil for none.
	bfqFeatures map[string]bool
}

// loadBefore returns the 1-minute load average right before tracing, as
// the rig recorded it (host_load.loadavg.loadavg_before; "" when absent),
// and whether its -W wait timed out with the load still above the threshold.
func (m *manifest) loadBefore() (string, bool) {
	la := m.HostLoad.Loadavg
	f := strings.Fields(la["loadavg_before"])
	if len(f) == 0 {
		return "", false
	}
	return f[0], la["load_wait_timed_out"] == "1"
}

// weights returns the cgroups' bfq_weight by id (cgroups without one are left out).
func (m *manifest) weights() map[uint64]int {
	w := map[uint64]int{}
	for _, c := range m.Cgroups {
		if c.Weight != nil {
			w[c.ID] = *c.Weight
		}
	}
	return w
}

// paths returns the cgroups' paths by id.
func (m *manifest) paths() map[uint64]string {
	p := map[uint64]string{}
	for _, c := range m.Cgroups {
		if c.Path != "" {
			p[c.ID] = c.Path
		}
	}
	return p
}

// requested returns tunables_requested as NAME=VALUE pairs: the tunables
// the rig changed from the kernel's defaults before the capture.
func (m *manifest) requested() map[string]string {
	set := map[string]string{}
	for _, t := range m.TunablesRequested {
		if k, v, ok := strings.Cut(t, "="); ok {
			set[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return set
}

// rotational returns device.rotational (true when the manifest does not say).
// queue returns the queue the manifest describes: the tag set's depth
// and, with -wbt, the writeback throttle's target when the manifest's is
// set (BFQ shows 0, having turned it off).
func (m *manifest) queue() replay.Queue {
	q := replay.Queue{Rotational: m.rotational()}
	if l := m.Device.WBTLatUsec; m.wbt && l != nil && *l > 0 {
		q.WBTLat = trace.Time(*l) * 1000
	}
	if d := m.Device.HWQueueDepth; d != nil {
		q.QueueDepth = *d
	}
	return q
}

func (m *manifest) rotational() bool {
	return m.Device.Rotational == nil || *m.Device.Rotational != 0
}

// discover lists the captures under dir/recorded, dir/recorded-fs and
// dir/small (see captureDirs), recorded first, each group sorted by name.
func discover(dir string) ([]*capture, error) {
	var out []*capture
	for _, group := range []string{"recorded", "recorded-fs", "small"} {
		cs, err := captureDirs(filepath.Join(dir, group), group)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// groupExtra is the Group of the captures of -captures directories.
const groupExtra = "extra"

// discoverExtra lists the captures of the -captures directories, in the
// order given, each directory's sorted by name. A directory that does not
// exist or holds no capture is an error: it was named on purpose.
func discoverExtra(dirs []string) ([]*capture, error) {
	var out []*capture
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			return nil, fmt.Errorf("-captures: %w", err)
		}
		cs, err := captureDirs(d, groupExtra)
		if err != nil {
			return nil, err
		}
		if len(cs) == 0 {
			return nil, fmt.Errorf("-captures %s: no capture (a directory NAME holding manifest.json and NAME.blktrace.0[.zst])", d)
		}
		out = append(out, cs...)
	}
	return out, nil
}

// captureDirs lists the captures directly under dir: every directory NAME
// holding a manifest.json and a NAME.blktrace.0.zst (or .0), sorted by
// name, with the given group. A missing dir lists nothing.
func captureDirs(dir, group string) ([]*capture, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var out []*capture
	for _, name := range names {
		cdir := filepath.Join(dir, name)
		base := filepath.Join(cdir, name)
		if !exists(base+".blktrace.0.zst") && !exists(base+".blktrace.0") {
			continue // baselines-untraced and the like: no trace
		}
		b, err := os.ReadFile(filepath.Join(cdir, "manifest.json"))
		if os.IsNotExist(err) && group == groupExtra {
			// capture.sh writes the manifest last: a capture still being
			// recorded (or one that failed) in a -captures directory.
			fmt.Fprintf(os.Stderr, "fidelity: %s: no manifest.json yet (being recorded, or failed): left out\n", cdir)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		c := &capture{Name: name, Group: group, Dir: dir, Base: base}
		if err := json.Unmarshal(b, &c.Man); err != nil {
			return nil, fmt.Errorf("%s/manifest.json: %w", cdir, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// selectCaptures keeps the captures named in only (comma-separated names;
// "" keeps all). Every name must exist.
func selectCaptures(all []*capture, only string) ([]*capture, error) {
	if strings.TrimSpace(only) == "" {
		return all, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(n, "recorded-fs/"), "recorded/"), "small/")] = true
		}
	}
	var out []*capture
	for _, c := range all {
		if want[c.Name] {
			out = append(out, c)
			delete(want, c.Name)
		}
	}
	if len(want) > 0 {
		var missing, names []string
		for n := range want {
			missing = append(missing, n)
		}
		sort.Strings(missing)
		for _, c := range all {
			names = append(names, c.Name)
		}
		return nil, fmt.Errorf("-only: no capture named %s (have: %s)", strings.Join(missing, ", "), strings.Join(names, ", "))
	}
	return out, nil
}

// spec is one replay of a capture: the model and its settings.
type spec struct {
	Model      string            // none, mq-deadline, bfq, cfq
	Kernel     string            // kernel preset ("" for models without presets)
	Set        map[string]string // --set, queue/iosched/ tunables only
	Weights    map[uint64]int    // --weight, given to the model
	Labels     map[uint64]int    // weights reported in the diff (the manifest's)
	Rotational bool              // queue/rotational
	Queue      replay.Queue      // the rest of the queue as the manifest gives it (writeback throttling)
	Note       string            // why this model, when it is not the capture's scheduler
	Timed      bool              // replay.WorkTimed: busy processes cycle until the capture's span has passed
	Features   map[string]bool   // --feature NAME=on|off (BFQ replays: -bfq-feature)
	// Recorded, when not "", turns on the host model of a what-if
	// (replay.DefaultHostCosts, as `tracesched replay` applies it): the
	// capture was recorded under Recorded. Traced takes the model's cost
	// as traced (MODEL+messages): the real run it is compared with was
	// recorded with the scheduler's messages on.
	Recorded string
	Traced   bool
}

// ownSpec is the matching model of the capture's scheduler, with the
// manifest's weights (BFQ) and requested tunables.
func ownSpec(c *capture) (spec, error) {
	m := &c.Man
	s := spec{Set: m.requested(), Labels: m.weights(), Rotational: m.rotational(), Queue: m.queue(), Weights: map[uint64]int{}}
	switch m.Scheduler {
	case "bfq":
		s.Model, s.Kernel, s.Weights, s.Features = "bfq", "6.18", m.weights(), m.bfqFeatures
	case "mq-deadline":
		s.Model = "mq-deadline"
	case "none":
		s.Model = "none"
	case "kyber":
		// kyber has no model; mq-deadline is the nearest (both dispatch
		// in arrival order per direction without idling or per-process
		// queues). kyber's latency targets are not tunables of it.
		s.Model = "mq-deadline"
		s.Note = "kyber has no model: replayed through mq-deadline, the nearest (kyber's read_lat/write_lat targets dropped)"
		s.Set = map[string]string{}
	default:
		return s, fmt.Errorf("%s: manifest names scheduler %q, which has no model", c.Name, m.Scheduler)
	}
	return s, nil
}

// cfqShared lists the sysfs tunables CFQ shares with BFQ and mq-deadline
// under the same name and meaning; a capture's requested ones carry over.
var cfqShared = map[string]bool{
	"slice_idle": true, "slice_idle_us": true, "low_latency": true, "back_seek_max": true,
	"back_seek_penalty": true, "fifo_expire_sync": true, "fifo_expire_async": true,
}

// cfqSpec is the CFQ what-if of a capture: CFQ 4.19 with the manifest's
// BFQ weights as blkio.weight, 1:1 (clamped to CFQ's 10..1000), and the
// requested tunables CFQ also has.
func cfqSpec(c *capture) (spec, []string) {
	m := &c.Man
	s := spec{Model: "cfq", Kernel: "4.19", Set: map[string]string{}, Weights: map[uint64]int{}, Labels: m.weights(), Rotational: m.rotational(), Queue: m.queue()}
	var notes []string
	for id, w := range m.weights() {
		cw := min(max(w, 10), 1000)
		if cw != w {
			notes = append(notes, fmt.Sprintf("cgroup %d: BFQ weight %d clamped to CFQ's %d", id, w, cw))
		}
		s.Weights[id] = cw
		s.Labels[id] = cw
	}
	for k, v := range m.requested() {
		if cfqShared[k] {
			s.Set[k] = v
		} else {
			notes = append(notes, fmt.Sprintf("%s=%s not carried over (CFQ has no such tunable)", k, v))
		}
	}
	sort.Strings(notes)
	return s, notes
}

// flags renders a spec as `tracesched replay` flags, to rerun one row.
func (s spec) flags() string {
	var b strings.Builder
	fmt.Fprintf(&b, "--sched %s", s.Model)
	for _, id := range slices.Sorted(maps.Keys(s.Weights)) {
		fmt.Fprintf(&b, " --weight %d=%d", id, s.Weights[id])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Set)) {
		fmt.Fprintf(&b, " --set %s=%s", k, s.Set[k])
	}
	return b.String()
}

// crossPair is a capture recorded under mq-deadline and the capture of the
// same job recorded under BFQ: issue 11's cross-scheduler check replays the
// first through the BFQ model and compares it with the second.
type crossPair struct {
	MQ, BFQ *capture
}

// crossPairs pairs the file-system captures (recorded-fs and -captures
// ones) by name: fs-mqdl-REST with fs-bfq-REST, or else with the one
// fs-bfq-REST-SUFFIX (fs-mqdl-2bufread and fs-bfq-2bufread-idle2ms), in
// the same group. Captures without a partner are left out.
func crossPairs(cs []*capture) []crossPair {
	var out []crossPair
	for _, mq := range cs {
		if mq.Man.Scheduler != "mq-deadline" || (mq.Group != "recorded-fs" && mq.Group != groupExtra) {
			continue
		}
		rest, ok := strings.CutPrefix(mq.Name, "fs-mqdl-")
		if !ok {
			continue
		}
		var exact, prefixed []*capture
		for _, b := range cs {
			if b.Group != mq.Group || b.Man.Scheduler != "bfq" {
				continue
			}
			switch {
			case b.Name == "fs-bfq-"+rest:
				exact = append(exact, b)
			case strings.HasPrefix(b.Name, "fs-bfq-"+rest+"-"):
				prefixed = append(prefixed, b)
			}
		}
		switch {
		case len(exact) == 1:
			out = append(out, crossPair{mq, exact[0]})
		case len(exact) == 0 && len(prefixed) == 1:
			out = append(out, crossPair{mq, prefixed[0]})
		}
	}
	return out
}

// messages reports whether the trace carries the scheduler's own debug
// messages (the rig counts them per cgroup).
func (m *manifest) messages() bool {
	for _, g := range m.Cgroups {
		if g.Messages > 0 {
			return true
		}
	}
	return false
}

// crossSpec is the replay of p.MQ through the BFQ model (6.18) with the
// BFQ capture's tunables and its cgroups' weights, matched to the
// mq-deadline capture's cgroups by path, with WorkTimed and the host
// model (BFQ as traced when the BFQ capture carries its messages) as
// `tracesched replay` uses them in a what-if. ok is false when a weighted cgroup of the BFQ
// capture has no cgroup of the same path in the mq-deadline one.
func crossSpec(p crossPair) (spec, error) {
	bm, mm := &p.BFQ.Man, &p.MQ.Man
	s := spec{Model: "bfq", Kernel: "6.18", Set: bm.requested(), Weights: map[uint64]int{}, Labels: map[uint64]int{},
		Rotational: mm.rotational(), Queue: mm.queue(), Timed: true, Note: "the BFQ capture's weights and tunables", Features: bm.bfqFeatures,
		Recorded: mm.Scheduler, Traced: bm.messages()}
	byPath := map[string]uint64{}
	for _, c := range mm.Cgroups {
		byPath[c.Path] = c.ID
	}
	for _, c := range bm.Cgroups {
		if c.Weight == nil {
			continue
		}
		id, ok := byPath[c.Path]
		if !ok {
			return s, fmt.Errorf("%s: no cgroup %s, which has BFQ weight %d in %s", p.MQ.Name, c.Path, *c.Weight, p.BFQ.Name)
		}
		s.Weights[id], s.Labels[id] = *c.Weight, *c.Weight
	}
	return s, nil
}
