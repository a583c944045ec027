// Command bfqseeds measures the BFQ model's fidelity on the recorded
// captures and the seed scenarios (docs/bfq-fidelity.md):
//
//	go run ./bench/bfqseeds [-captures DIR] [-only NAME,...] [-json] [-msgs TEXT [-msgs-limit N]]
//
// For each run it replays a capture closed-loop through the BFQ model (its
// own weights and tunables from manifest.json unless the run overrides
// them), diffs the prediction against the capture and prints: per-cgroup
// (or per-process) shares of the bytes issued while every cgroup still has
// requests and of the bytes completed in backlogged windows, throughput,
// think-time agreement, queue merges and the first scheduled merge, and
// the Kendall tau of the dispatch order; then a summary against the
// targets. Debugging aids: -msgs prints matching scheduler messages of both
// sides; BFQSEEDS_INJECT=1 prints the bytes each cgroup issued while which
// cgroup's queue was in service; BFQSEEDS_DEBUG=1 prints window coverage.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tracesched/tracesched/device"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/internal/pipeline"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/scheduler/bfq"
	"github.com/tracesched/tracesched/trace"
)

var (
	dumpMsgs string
	msgLimit int
)

type run struct {
	Name    string            // row name
	Capture string            // directory under -captures
	Kernel  string            // "" = 6.18
	Weights map[uint64]int    // nil = the manifest's
	Set     map[string]string // merged over the manifest's tunables_requested
	ByPID   bool              // shares per process instead of per cgroup
}

var runs = []run{
	{Name: "a-bfq-w100-900", Capture: "a-bfq-w100-900"},
	{Name: "a-bfq-w300-700", Capture: "a-bfq-w300-700"},
	{Name: "c-bfq-8randwrite-root", Capture: "c-bfq-8randwrite-root", ByPID: true},
	{Name: "c-bfq-8randwrite-cgroup", Capture: "c-bfq-8randwrite-cgroup", ByPID: true},
	{Name: "d-bfq-4seqread-idle2000", Capture: "d-bfq-4seqread-idle2000", ByPID: true},
	{Name: "e-bfq-w100-900-idle0", Capture: "e-bfq-w100-900-idle0"},
	{Name: "g-bfq-large-nomsg", Capture: "g-bfq-large-nomsg"},
	// seed 000 (a): weights on a saturated non-rotational device.
	{Name: "seed-a-10:90", Capture: "b-mqdl-w500-500", Weights: map[uint64]int{501: 100, 521: 900}, Set: map[string]string{"rotational": "0"}},
	{Name: "seed-a-20:80", Capture: "b-mqdl-w500-500", Weights: map[uint64]int{501: 200, 521: 800}, Set: map[string]string{"rotational": "0"}},
	{Name: "seed-a-30:70", Capture: "b-mqdl-w500-500", Weights: map[uint64]int{501: 300, 521: 700}, Set: map[string]string{"rotational": "0"}},
	{Name: "seed-a-40:60", Capture: "b-mqdl-w500-500", Weights: map[uint64]int{501: 400, 521: 600}, Set: map[string]string{"rotational": "0"}},
	{Name: "seed-a-50:50", Capture: "b-mqdl-w500-500", Weights: map[uint64]int{501: 500, 521: 500}, Set: map[string]string{"rotational": "0"}},
	// seed 000 (b): non-root penalty before 6.2.
	{Name: "seed-b-root-6.1", Capture: "c-bfq-8randwrite-root", Kernel: "6.1", ByPID: true},
	{Name: "seed-b-cgroup-6.1", Capture: "c-bfq-8randwrite-cgroup", Kernel: "6.1", ByPID: true},
	// seed 004 (c): false merges and think-time flips before 5.12.
	{Name: "seed-c-d-5.11", Capture: "d-bfq-4seqread-idle2000", Kernel: "5.11", ByPID: true},
	// seed 004 on a file system: two buffered sequential readers (readahead,
	// split bios), slice_idle 2 ms, 6.18 as recorded and 5.11.
	{Name: "seed-004-fs-6.18", Capture: "../recorded-fs/fs-bfq-2bufread-idle2ms", ByPID: true},
	{Name: "seed-004-fs-5.11", Capture: "../recorded-fs/fs-bfq-2bufread-idle2ms", Kernel: "5.11", ByPID: true},
}

// Row is one run's measurements.
type Row struct {
	Name, Kernel       string
	Weights            map[uint64]int
	Set                map[string]string
	RealReqs           int
	PredReqs           int
	Keys               []string  // cgroup ids or pids
	RealIssueShare     []float64 // shares of the bytes issued while every key has requests left (issueShares)
	PredIssueShare     []float64
	MaxIssueShareErrPP float64
	RealHalfRatio      float64 // issue ratio until a key has issued half its bytes (steady state, 2 keys)
	PredHalfRatio      float64
	RealIssueRatio     float64 // last/first key bytes issued (D) until the first key issues its last request (2 keys)
	PredIssueRatio     float64
	RealWindows        int // backlogged 100 ms windows the shares come from
	PredWindows        int
	RealShare          []float64 // in the 100 ms windows where every key is backlogged
	PredShare          []float64
	MaxShareErrPP      float64 // percentage points
	RealRatio          float64 // last key / first key bandwidth in the window (2 keys)
	PredRatio          float64
	RealMiBs           float64 // total bytes / span (first Q to last C)
	PredMiBs           float64
	RealCgMiBs         []float64 // per key: bytes / own active span
	PredCgMiBs         []float64
	Tau                float64
	MeanDisp           float64
	ThinkAgree         float64
	RealWinRatio       []float64 // last/first key bytes per 100 ms window while both are active
	PredWinRatio       []float64
	ThinkCompared      int
	RealLogged         diff.LoggedAgreement
	PredLogged         diff.LoggedAgreement
	RealLoggedFlips    int
	PredLoggedFlips    int
	PredFlips          int
	RealQMerges        int
	PredQMerges        int
	RealSharedFirst    float64 // s since the first Q; -1 none
	PredSharedFirst    float64
	RealMergeAfter     float64 // s from the merged queues' creation to the first scheduled merge; -1
	PredMergeAfter     float64
	PredShortFrac      float64 // mean predicted short fraction of sync queues
	RealShortFrac      float64
	TopDivergence      string
	Seconds            float64
}

func main() {
	dir := flag.String("captures", "/work/shared/captures/recorded", "directory of the recorded captures")
	only := flag.String("only", "", "comma-separated run names (prefixes) to run")
	asJSON := flag.Bool("json", false, "print JSON rows")
	msgs := flag.String("msgs", "", "debug: print real and predicted messages containing this text")
	limit := flag.Int("msgs-limit", 40, "debug: at most this many messages per side with -msgs")
	flag.Parse()
	dumpMsgs = *msgs
	msgLimit = *limit
	var rows []Row
	for _, r := range runs {
		if *only != "" && !matches(r.Name, *only) {
			continue
		}
		row, err := measure(*dir, r)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", r.Name, err)
			os.Exit(1)
		}
		rows = append(rows, row)
		if !*asJSON {
			printRow(os.Stdout, row)
		}
	}
	if !*asJSON {
		summary(os.Stdout, rows)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", " ")
		enc.Encode(rows)
	}
}

func matches(name, list string) bool {
	for _, p := range strings.Split(list, ",") {
		if p != "" && strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

type manifest struct {
	Cgroups []struct {
		ID     uint64 `json:"cgroup_id"`
		Path   string `json:"path"`
		Weight *int   `json:"bfq_weight"`
	} `json:"cgroups"`
	Tunables []string `json:"tunables_requested"`
}

func measure(dir string, r run) (Row, error) {
	start := time.Now()
	base := filepath.Join(dir, r.Capture, filepath.Base(r.Capture))
	var man manifest
	if b, err := os.ReadFile(filepath.Join(dir, r.Capture, "manifest.json")); err == nil {
		if err := json.Unmarshal(b, &man); err != nil {
			return Row{}, err
		}
	}
	weights := map[uint64]int{}
	paths := map[uint64]string{}
	for _, c := range man.Cgroups {
		paths[c.ID] = c.Path
		if c.Weight != nil {
			weights[c.ID] = *c.Weight
		}
	}
	if r.Weights != nil {
		weights = r.Weights
	}
	set := map[string]string{}
	for _, t := range man.Tunables {
		if k, v, ok := strings.Cut(t, "="); ok {
			set[k] = v
		}
	}
	for k, v := range r.Set {
		set[k] = v
	}
	kernel := r.Kernel
	if kernel == "" {
		kernel = "6.18"
	}
	p := Params{Input: base, Kernel: kernel, Weights: weights, Paths: paths, Set: set}
	real, pred, err := Replay(p)
	if err != nil {
		return Row{}, err
	}
	if dumpMsgs != "" {
		for _, side := range []*diff.Side{real, pred} {
			n, tot := 0, 0
			for _, m := range side.Messages.All() {
				if strings.Contains(m.Text, dumpMsgs) {
					tot++
					if n < msgLimit {
						n++
						fmt.Printf("%s %.6f cg%d %s\n", side.Meta.Source, float64(m.Time)/1e9, m.Cgroup, m.Text)
					}
				}
			}
			fmt.Printf("-- %d messages\n", tot)
		}
	}
	si, idleOff := diff.ThinkOptions(set)
	if os.Getenv("BFQSEEDS_INJECT") != "" {
		injectReport(pred)
	}
	res := diff.Compare(real, pred, diff.Options{Weights: weights, SliceIdle: si, IdleOff: idleOff})
	row := Row{Name: r.Name, Kernel: kernel, Weights: weights, Set: set, RealReqs: real.NumRequests(), PredReqs: pred.NumRequests()}
	keyOf := func(q *trace.Request) uint64 { return q.Cgroup }
	if r.ByPID {
		keyOf = func(q *trace.Request) uint64 { return uint64(q.PID) }
	}
	realReqs, predReqs := real.RequestSlice(), pred.RequestSlice()
	keys := keySet(realReqs, keyOf)
	rs, rr, rcg, rw := shares(realReqs, keys, keyOf)
	ps, pr, pcg, pw := shares(predReqs, keys, keyOf)
	row.RealWindows, row.PredWindows = rw, pw
	ris, rir := issueShares(realReqs, keys, keyOf, 0.98)
	pis, pir := issueShares(predReqs, keys, keyOf, 0.98)
	row.RealIssueRatio, row.PredIssueRatio = rir, pir
	_, row.RealHalfRatio = issueShares(realReqs, keys, keyOf, 0.5)
	_, row.PredHalfRatio = issueShares(predReqs, keys, keyOf, 0.5)
	for i, k := range keys {
		row.Keys = append(row.Keys, fmt.Sprint(k))
		row.RealShare = append(row.RealShare, rs[i])
		row.PredShare = append(row.PredShare, ps[i])
		row.RealIssueShare = append(row.RealIssueShare, ris[i])
		row.PredIssueShare = append(row.PredIssueShare, pis[i])
		if e := 100 * abs(rs[i]-ps[i]); e > row.MaxShareErrPP {
			row.MaxShareErrPP = e
		}
		if e := 100 * abs(ris[i]-pis[i]); e > row.MaxIssueShareErrPP {
			row.MaxIssueShareErrPP = e
		}
	}
	row.RealRatio, row.PredRatio = rr, pr
	row.RealCgMiBs, row.PredCgMiBs = rcg, pcg
	row.RealMiBs = mibs(realReqs)
	row.PredMiBs = mibs(predReqs)
	row.Tau = res.DispatchOrder.KendallTau
	row.MeanDisp = res.DispatchOrder.MeanDisplacement
	tt := res.ThinkTime
	row.ThinkAgree, row.ThinkCompared = tt.Agreement, tt.Compared
	row.RealLogged, row.PredLogged = tt.RealLogged, tt.PredLogged
	row.RealWinRatio = windowRatios(realReqs, keys, keyOf)
	row.PredWinRatio = windowRatios(predReqs, keys, keyOf)
	var n int
	for _, q := range tt.PerQueue {
		if !q.Sync {
			continue
		}
		row.RealLoggedFlips += q.RealLoggedFlips
		row.PredLoggedFlips += q.PredLoggedFlips
		row.PredFlips += q.PredFlips
		row.PredShortFrac += q.PredShortFraction
		row.RealShortFrac += q.RealShortFraction
		n++
	}
	if n > 0 {
		row.PredShortFrac /= float64(n)
		row.RealShortFrac /= float64(n)
	}
	m := res.Merges
	row.RealQMerges, row.PredQMerges = m.RealQueueMerges, m.PredQueueMerges
	row.RealSharedFirst = since(real, m.RealSharedFirst)
	row.PredSharedFirst = since(pred, m.PredSharedFirst)
	row.RealMergeAfter = mergeAfter(real)
	row.PredMergeAfter = mergeAfter(pred)
	if len(res.DispatchOrder.Ranked) > 0 {
		d := res.DispatchOrder.Ranked[0]
		row.TopDivergence = fmt.Sprintf("%+v", d)
		if len(row.TopDivergence) > 400 {
			row.TopDivergence = row.TopDivergence[:400]
		}
	}
	row.Seconds = time.Since(start).Seconds()
	return row, nil
}

// Params selects one replay.
type Params struct {
	Input   string
	Kernel  string
	Weights map[uint64]int
	Paths   map[uint64]string
	Set     map[string]string
	Seed    uint64
}

// Replay loads the capture, calibrates a device model from it and replays it
// closed-loop through the BFQ model, as `tracesched replay --sched bfq` does.
func Replay(p Params) (real, pred *diff.Side, err error) {
	src, err := blktrace.Open(p.Input)
	if err != nil {
		return nil, nil, err
	}
	// One read: the real side and the workload (internal/pipeline); the
	// real side without the capture's metadata, as before.
	capt, err := pipeline.Read(src, nil, nil)
	src.Close()
	if err != nil {
		return nil, nil, err
	}
	real, w := capt.Real, capt.Workload
	cal, err := pipeline.Calibrate(capt.DeviceRequests(), device.CalibrateOptions{Seed: p.Seed}, nil)
	if err != nil {
		return nil, nil, err
	}
	dm := cal.Model
	q := replay.Queue{Rotational: w.Dev.Major() != 259}
	if v, ok := p.Set["rotational"]; ok {
		q.Rotational = v != "0"
	}
	so := replay.Options{Set: p.Set, Weights: p.Weights, CgroupPaths: p.Paths, Kernel: p.Kernel}
	cfg := replay.Config{
		NewScheduler: func(h replay.Host) (replay.Scheduler, error) { return bfq.New(h, so) },
		Device:       dm.NewDevice(p.Seed),
		Queue:        q,
	}
	pred = diff.NewSide(trace.Meta{Source: "replay", Kernel: p.Kernel, Devices: []trace.Dev{w.Dev}, Cgroups: p.Paths,
		Extra: map[string]string{"scheduler": "bfq"}})
	if _, err := replay.Run(w, cfg, func(e *trace.Event) error { pred.Add(e); return nil }); err != nil {
		return nil, nil, err
	}
	pred.Finish()
	return real, pred, nil
}

func keySet(reqs []trace.Request, keyOf func(*trace.Request) uint64) []uint64 {
	seen := map[uint64]bool{}
	var keys []uint64
	for i := range reqs {
		k := keyOf(&reqs[i])
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	return keys
}

// shares returns each key's share of the bytes completed in the 100 ms
// windows where every key is backlogged (has a request queued or in flight,
// from its first bio's Q to its C, during at least 80% of the window: fio reaps and resubmits in batches, so even a saturating job leaves gaps), the
// bandwidth ratio last/first key over those windows, each key's MiB/s over
// its own active span (first Q to last C), and the number of windows used.
func shares(reqs []trace.Request, keys []uint64, keyOf func(*trace.Request) uint64) (sh []float64, ratio float64, own []float64, windows int) {
	const win = 100 * trace.Time(time.Millisecond)
	idx := map[uint64]int{}
	for i, k := range keys {
		idx[k] = i
	}
	first := make([]trace.Time, len(keys))
	last := make([]trace.Time, len(keys))
	total := make([]float64, len(keys))
	for i := range first {
		first[i] = 1<<62 - 1
		last[i] = -1 << 62
	}
	ivs := make([][][2]trace.Time, len(keys))
	lo, hi := trace.Time(1<<62-1), trace.Time(-1<<62)
	for i := range reqs {
		q := &reqs[i]
		j, ok := idx[keyOf(q)]
		if !ok || q.Queue == trace.NoTime || q.Complete == trace.NoTime {
			continue
		}
		first[j] = min(first[j], q.Queue)
		last[j] = max(last[j], q.Complete)
		total[j] += float64(q.Bytes)
		ivs[j] = append(ivs[j], [2]trace.Time{q.Queue, q.Complete})
		lo, hi = min(lo, q.Queue), max(hi, q.Complete)
	}
	for i := range keys {
		own = append(own, total[i]/(1<<20)/(float64(last[i]-first[i])/1e9))
	}
	n := int((hi-lo)/win) + 1
	ok := make([]bool, n)
	for i := range ok {
		ok[i] = true
	}
	cover := make([]trace.Time, n)
	for j := range keys {
		iv := ivs[j]
		sort.Slice(iv, func(a, b int) bool { return iv[a][0] < iv[b][0] })
		clear(cover)
		var cs, ce trace.Time = -1, -1
		flush := func() {
			for a := cs; a < ce; {
				k := int((a - lo) / win)
				end := min(ce, lo+trace.Time(k+1)*win)
				cover[k] += end - a
				a = end
			}
		}
		for _, x := range iv {
			if x[0] > ce {
				if ce > cs {
					flush()
				}
				cs, ce = x[0], x[1]
			} else if x[1] > ce {
				ce = x[1]
			}
		}
		if ce > cs {
			flush()
		}
		if os.Getenv("BFQSEEDS_DEBUG") != "" {
			fmt.Fprintln(os.Stderr, "key", keys[j], "intervals", len(iv), "lo", lo, "hi", hi, "cover", cover[:min(8, len(cover))])
		}
		for k := range ok {
			if cover[k] < win*80/100 {
				ok[k] = false
			}
		}
	}
	for _, v := range ok {
		if v {
			windows++
		}
	}
	// Keys with think time (psync qd1 processes, rate-capped jobs) are never
	// backlogged for a whole window: fall back to the window where every key
	// is active, from the latest first Q to the earliest last C (windows = 0).
	alo, ahi := first[0], last[0]
	for i := range keys {
		alo, ahi = max(alo, first[i]), min(ahi, last[i])
	}
	b := make([]float64, len(keys))
	var sum float64
	for i := range reqs {
		q := &reqs[i]
		j, found := idx[keyOf(q)]
		if !found || q.Complete == trace.NoTime || q.Queue == trace.NoTime {
			continue
		}
		in := windows > 0 && ok[int((q.Complete-lo)/win)]
		if windows == 0 {
			in = q.Complete >= alo && q.Complete <= ahi
		}
		if in {
			b[j] += float64(q.Bytes)
			sum += float64(q.Bytes)
		}
	}
	for i := range b {
		sh = append(sh, b[i]/sum)
	}
	if len(b) >= 2 && b[0] > 0 {
		ratio = b[len(b)-1] / b[0]
	}
	return sh, ratio, own, windows
}

func mibs(reqs []trace.Request) float64 {
	var lo, hi trace.Time = 1<<62 - 1, -1 << 62
	var bytes float64
	for i := range reqs {
		q := &reqs[i]
		if q.Queue == trace.NoTime || q.Complete == trace.NoTime {
			continue
		}
		lo, hi = min(lo, q.Queue), max(hi, q.Complete)
		bytes += float64(q.Bytes)
	}
	return bytes / (1 << 20) / (float64(hi-lo) / 1e9)
}

func firstQ(s *diff.Side) trace.Time {
	lo := trace.Time(1<<62 - 1)
	for i := range s.NumRequests() {
		if t := s.RequestAt(i).Queue; t != trace.NoTime && t < lo {
			lo = t
		}
	}
	return lo
}

func since(s *diff.Side, t trace.Time) float64 {
	if t == trace.NoTime {
		return -1
	}
	return float64(t-firstQ(s)) / 1e9
}

// mergeAfter is the time from the creation (first Q) of the latest-created
// queue named in the first "scheduling merge with queue" message to that
// message, in seconds; -1 without such a message.
func mergeAfter(s *diff.Side) float64 {
	for i := range s.Messages.Len() {
		m := s.Messages.At(i)
		if !strings.Contains(m.Text, "scheduling merge with queue") {
			continue
		}
		// "bfq<pid>S ... scheduling merge with queue <pid>"
		var created trace.Time = -1 << 62
		for _, pid := range pidsIn(m.Text) {
			for j := range s.NumRequests() {
				if r := s.RequestAt(j); r.PID == pid && r.Queue != trace.NoTime {
					created = max(created, r.Queue)
					break
				}
			}
		}
		if created == -1<<62 {
			return -1
		}
		return float64(m.Time-created) / 1e9
	}
	return -1
}

func pidsIn(text string) []uint32 {
	var out []uint32
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return !(r >= '0' && r <= '9') }) {
		var n uint64
		if _, err := fmt.Sscan(f, &n); err == nil && n > 0 && n < 1<<22 {
			out = append(out, uint32(n))
		}
	}
	return out
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func printRow(w io.Writer, r Row) {
	fmt.Fprintf(w, "== %s (kernel %s, weights %v, set %v) %.1fs\n", r.Name, r.Kernel, r.Weights, r.Set, r.Seconds)
	fmt.Fprintf(w, "  requests real %d pred %d; MiB/s real %.1f pred %.1f (%+.1f%%)\n", r.RealReqs, r.PredReqs, r.RealMiBs, r.PredMiBs, 100*(r.PredMiBs/r.RealMiBs-1))
	for i, k := range r.Keys {
		fmt.Fprintf(w, "  %-8s issue share real %5.1f%% pred %5.1f%%   completion-window share real %5.1f%% pred %5.1f%%   own-span MiB/s real %6.1f pred %6.1f\n",
			k, 100*r.RealIssueShare[i], 100*r.PredIssueShare[i], 100*r.RealShare[i], 100*r.PredShare[i], r.RealCgMiBs[i], r.PredCgMiBs[i])
	}
	fmt.Fprintf(w, "  shares from: backlogged 100 ms windows real %d pred %d (0 = the all-active window instead)\n", r.RealWindows, r.PredWindows)
	fmt.Fprintf(w, "  max issue-share error %.2f pp\n", r.MaxIssueShareErrPP)
	fmt.Fprintf(w, "  max completion-window share error %.2f pp; ratio last/first real %.2f pred %.2f\n", r.MaxShareErrPP, r.RealRatio, r.PredRatio)
	fmt.Fprintf(w, "  think agreement %.1f%% of %d; logged: real %.1f%% of %d, pred %.1f%% of %d; logged flips real %d pred %d; recomputed pred flips %d; short frac real %.2f pred %.2f\n",
		100*r.ThinkAgree, r.ThinkCompared, 100*r.RealLogged.Agreement, r.RealLogged.Points, 100*r.PredLogged.Agreement, r.PredLogged.Points, r.RealLoggedFlips, r.PredLoggedFlips, r.PredFlips, r.RealShortFrac, r.PredShortFrac)
	if len(r.Keys) == 2 {
		fmt.Fprintf(w, "  issue ratio (bytes dispatched until one key has issued 98%%) real %.2f pred %.2f\n", r.RealIssueRatio, r.PredIssueRatio)
		fmt.Fprintf(w, "  steady issue ratio (until one key has issued 50%%) real %.2f pred %.2f\n", r.RealHalfRatio, r.PredHalfRatio)
		fmt.Fprintf(w, "  100ms-window ratios real %s\n  100ms-window ratios pred %s\n", fmtList(r.RealWinRatio), fmtList(r.PredWinRatio))
	}
	fmt.Fprintf(w, "  queue merges real %d pred %d; first shared real %.3fs pred %.3fs; merge after creation real %.3fs pred %.3fs\n",
		r.RealQMerges, r.PredQMerges, r.RealSharedFirst, r.PredSharedFirst, r.RealMergeAfter, r.PredMergeAfter)
	fmt.Fprintf(w, "  dispatch tau %.4f mean displacement %.1f\n", r.Tau, r.MeanDisp)
	if r.TopDivergence != "" {
		fmt.Fprintf(w, "  top divergence %s\n", r.TopDivergence)
	}
}

func fmtList(v []float64) string {
	var b strings.Builder
	for i, x := range v {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.2f", x)
	}
	return b.String()
}

// windowRatios is the last/first key ratio of bytes completed in each 100 ms
// window of the all-active window (2 keys only).
func windowRatios(reqs []trace.Request, keys []uint64, keyOf func(*trace.Request) uint64) []float64 {
	if len(keys) != 2 {
		return nil
	}
	first := [2]trace.Time{1<<62 - 1, 1<<62 - 1}
	last := [2]trace.Time{-1 << 62, -1 << 62}
	for i := range reqs {
		q := &reqs[i]
		j := -1
		switch keyOf(q) {
		case keys[0]:
			j = 0
		case keys[1]:
			j = 1
		}
		if j < 0 || q.Queue == trace.NoTime || q.Complete == trace.NoTime {
			continue
		}
		first[j], last[j] = min(first[j], q.Queue), max(last[j], q.Complete)
	}
	lo, hi := max(first[0], first[1]), min(last[0], last[1])
	const win = 100 * trace.Time(time.Millisecond)
	n := int((hi - lo) / win)
	if n <= 0 {
		return nil
	}
	b := make([][2]float64, n)
	for i := range reqs {
		q := &reqs[i]
		if q.Complete == trace.NoTime || q.Complete < lo {
			continue
		}
		k := int((q.Complete - lo) / win)
		if k >= n {
			continue
		}
		switch keyOf(q) {
		case keys[0]:
			b[k][0] += float64(q.Bytes)
		case keys[1]:
			b[k][1] += float64(q.Bytes)
		}
	}
	out := make([]float64, n)
	for i := range b {
		if b[i][0] > 0 {
			out[i] = b[i][1] / b[i][0]
		}
	}
	return out
}

// issueShares is each key's share of the bytes issued to the device (D)
// from the latest first Q to the earliest time a key has issued frac of its
// bytes: the service the scheduler
// granted while every key still had requests to send. Unlike completion
// windows it has no tail effect from a stream running dry. ratio is last/first key.
func issueShares(reqs []trace.Request, keys []uint64, keyOf func(*trace.Request) uint64, frac float64) (sh []float64, ratio float64) {
	idx := map[uint64]int{}
	for i, k := range keys {
		idx[k] = i
	}
	first := make([]trace.Time, len(keys))
	last := make([]trace.Time, len(keys))
	for i := range keys {
		first[i], last[i] = 1<<62-1, -1<<62
	}
	// last[k]: when key k has issued 98% of its bytes. A closed-loop replay
	// of a fixed stream ends with a tail where the process has fewer
	// requests outstanding than its depth (it is no longer backlogged), and
	// the other key takes the device: not a scheduling decision to score.
	tot := make([]float64, len(keys))
	byIssue := make([]int, 0, len(reqs))
	for i := range reqs {
		q := &reqs[i]
		k, ok := idx[keyOf(q)]
		if !ok || q.Queue == trace.NoTime || q.Issue == trace.NoTime {
			continue
		}
		first[k] = min(first[k], q.Queue)
		tot[k] += float64(q.Bytes)
		byIssue = append(byIssue, i)
	}
	sort.Slice(byIssue, func(a, b int) bool { return reqs[byIssue[a]].Issue < reqs[byIssue[b]].Issue })
	acc := make([]float64, len(keys))
	for _, i := range byIssue {
		q := &reqs[i]
		k := idx[keyOf(q)]
		acc[k] += float64(q.Bytes)
		if last[k] == -1<<62 && acc[k] >= frac*tot[k] {
			last[k] = q.Issue
		}
	}
	lo, hi := first[0], last[0]
	for i := range keys {
		lo, hi = max(lo, first[i]), min(hi, last[i])
	}
	b := make([]float64, len(keys))
	var sum float64
	for i := range reqs {
		q := &reqs[i]
		k, ok := idx[keyOf(q)]
		if !ok || q.Issue == trace.NoTime || q.Issue < lo || q.Issue > hi {
			continue
		}
		b[k] += float64(q.Bytes)
		sum += float64(q.Bytes)
	}
	for i := range b {
		sh = append(sh, b[i]/sum)
	}
	if len(b) >= 2 && b[0] > 0 {
		ratio = b[len(b)-1] / b[0]
	}
	return sh, ratio
}

// injectReport (debug, BFQSEEDS_INJECT=1) prints the bytes each cgroup had
// issued while it was in service, while another cgroup's queue was in
// service, and while none was.
func injectReport(s *diff.Side) {
	type ev struct {
		t  trace.Time
		cg uint64 // 0: expire
	}
	var evs []ev
	for i := range s.Messages.Len() {
		m := s.Messages.At(i)
		switch {
		case strings.Contains(m.Text, "set_in_service_queue"):
			evs = append(evs, ev{m.Time, m.Cgroup})
		case strings.Contains(m.Text, " expire ("):
			evs = append(evs, ev{m.Time, 0})
		}
	}
	reqs := s.RequestSlice()
	sort.Slice(reqs, func(a, b int) bool { return reqs[a].Issue < reqs[b].Issue })
	type k struct{ cg, in uint64 }
	bytes := map[k]float64{}
	j := 0
	var cur uint64
	for i := range reqs {
		q := &reqs[i]
		if q.Issue == trace.NoTime {
			continue
		}
		for j < len(evs) && evs[j].t <= q.Issue {
			cur = evs[j].cg
			j++
		}
		bytes[k{q.Cgroup, cur}] += float64(q.Bytes)
	}
	bins := map[int][2]float64{}
	for i := range reqs {
		q := &reqs[i]
		if q.Issue == trace.NoTime {
			continue
		}
		b := bins[int(q.Issue/(200*trace.Time(time.Millisecond)))]
		if q.Cgroup == reqs[0].Cgroup {
			b[0] += float64(q.Bytes)
		} else {
			b[1] += float64(q.Bytes)
		}
		bins[int(q.Issue/(200*trace.Time(time.Millisecond)))] = b
	}
	for i := 0; i < len(bins); i++ {
		fmt.Printf("  bin %d: cg %d %.1f MiB, other %.1f MiB\n", i, reqs[0].Cgroup, bins[i][0]/(1<<20), bins[i][1]/(1<<20))
	}
	for kk, v := range bytes {
		fmt.Printf("  issued by cg %d while cg %d in service: %.1f MiB\n", kk.cg, kk.in, v/(1<<20))
	}
}

// summary checks the rows against docs/bfq-fidelity.md's targets.
func summary(w io.Writer, rows []Row) {
	by := map[string]Row{}
	for _, r := range rows {
		by[r.Name] = r
	}
	ok := func(b bool) string {
		if b {
			return "ok  "
		}
		return "MISS"
	}
	fmt.Fprintln(w, "\n== summary")
	for _, r := range rows {
		if strings.HasPrefix(r.Name, "seed-") {
			continue
		}
		mergeOK := (r.RealQMerges > 0) == (r.PredQMerges > 0)
		fmt.Fprintf(w, "%s %-26s issue-share err %.2f pp (<= 3); think %.1f%% (>= 90); queue merges real %d pred %d; tau %.3f (> 0.8)\n",
			ok(r.MaxIssueShareErrPP <= 3 && r.ThinkAgree >= 0.9 && mergeOK && r.Tau > 0.8), r.Name, r.MaxIssueShareErrPP, 100*r.ThinkAgree, r.RealQMerges, r.PredQMerges, r.Tau)
	}
	for _, c := range []struct {
		name string
		want float64
	}{{"seed-a-10:90", 9.2}, {"seed-a-20:80", 4.3}, {"seed-a-30:70", 2.7}, {"seed-a-40:60", 1.7}, {"seed-a-50:50", 1.0}} {
		if r, found := by[c.name]; found {
			e := r.PredHalfRatio/c.want - 1
			fmt.Fprintf(w, "%s %-26s steady ratio %.2f vs %.1f (%+.1f%%, within 15%%); to 98%%: %.2f (%+.1f%%)\n",
				ok(abs(e) <= 0.15), c.name, r.PredHalfRatio, c.want, 100*e, r.PredIssueRatio, 100*(r.PredIssueRatio/c.want-1))
		}
	}
	for _, n := range []string{"c-bfq-8randwrite-root", "c-bfq-8randwrite-cgroup"} {
		if r, found := by[n]; found {
			e := r.PredMiBs/r.RealMiBs - 1
			fmt.Fprintf(w, "%s %-26s 6.18 throughput %.1f vs real %.1f MiB/s (%+.1f%%, within 10%%)\n", ok(abs(e) <= 0.1), n, r.PredMiBs, r.RealMiBs, 100*e)
		}
	}
	if a, found := by["seed-b-root-6.1"]; found {
		if b, found := by["seed-b-cgroup-6.1"]; found {
			fmt.Fprintf(w, "%s %-26s 6.1 non-root %.1f vs root %.1f MiB/s (%.2fx; published 51 vs 112, 0.46x)\n",
				ok(b.PredMiBs < 0.8*a.PredMiBs), "seed-b-6.1", b.PredMiBs, a.PredMiBs, b.PredMiBs/a.PredMiBs)
		}
	}
	if r, found := by["d-bfq-4seqread-idle2000"]; found {
		fmt.Fprintf(w, "%s %-26s 6.18 merges %d (real %d), first merge %.3f s after creation (real %.3f), short think time %.0f%% of requests\n",
			ok(r.PredQMerges == r.RealQMerges && abs(r.PredMergeAfter-r.RealMergeAfter) < 0.02 && r.PredShortFrac > 0.9), "seed-c-6.18", r.PredQMerges, r.RealQMerges, r.PredMergeAfter, r.RealMergeAfter, 100*r.PredShortFrac)
	}
	if r, found := by["seed-c-d-5.11"]; found {
		fmt.Fprintf(w, "%s %-26s 5.11 queue merges %d, think-time flips logged %d recomputed %d (the seed expects false merges and flips)\n",
			ok(r.PredQMerges > 0 && r.PredLoggedFlips+r.PredFlips > 0), "seed-c-5.11", r.PredQMerges, r.PredLoggedFlips, r.PredFlips)
	}
}
