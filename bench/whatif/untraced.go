package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The runs of recorded/baselines-untraced: the jobs of ../shared/captures
// recorded/ run again without blktrace (rig/capture.sh -T), so what they
// show is what the schedulers do untraced, as in production. They have no
// trace, only fio's own figures (NAME.fio.json) and the kernel's counters
// in the manifest; a pair compares with them through fioResult.

// untracedDir is where "untraced/NAME" captures live under -shared.
const untracedDir = "captures/recorded/baselines-untraced"

// untraced reports whether c is a run without a trace: no
// NAME.blktrace.* beside its manifest, and fio's NAME.fio.json.
func (c *capture) untraced() bool {
	if m, _ := filepath.Glob(c.base() + ".blktrace.*"); len(m) > 0 {
		return false
	}
	_, err := os.Stat(c.base() + ".fio.json")
	return err == nil
}

// fioOutput is the part of fio's --output-format=json read here.
type fioOutput struct {
	Global map[string]string `json:"global options"`
	Jobs   []struct {
		Name    string            `json:"jobname"`
		Options map[string]string `json:"job options"`
		Read    fioDir            `json:"read"`
		Write   fioDir            `json:"write"`
		Runtime int64             `json:"job_runtime"` // ms
	} `json:"jobs"`
}

// fioDir is one direction of a fio job: bw_bytes in bytes per second
// over the job's runtime, clat_ns the completion latency (submission to
// completion, ns) of its N I/Os as fio's percentile table.
type fioDir struct {
	BWBytes float64 `json:"bw_bytes"`
	IOBytes int64   `json:"io_bytes"`
	Clat    struct {
		N          int64              `json:"N"`
		Percentile map[string]float64 `json:"percentile"`
	} `json:"clat_ns"`
}

// latDist is one latency distribution given as a percentile table: N
// samples, the value (seconds) at each percentile p (0-100), p ascending.
type latDist struct {
	n   int64
	pct []float64
	val []float64
}

func distOf(d fioDir) (latDist, bool) {
	if d.Clat.N <= 0 || len(d.Clat.Percentile) == 0 {
		return latDist{}, false
	}
	l := latDist{n: d.Clat.N}
	keys := make([]float64, 0, len(d.Clat.Percentile))
	byKey := map[float64]float64{}
	for k, v := range d.Clat.Percentile {
		p, err := strconv.ParseFloat(k, 64)
		if err != nil || p <= 0 || p > 100 || v < 0 {
			continue
		}
		keys = append(keys, p)
		byKey[p] = v / 1e9
	}
	slices.Sort(keys)
	for _, p := range keys {
		l.pct = append(l.pct, p)
		l.val = append(l.val, byKey[p])
	}
	return l, len(l.pct) > 0
}

// cdf returns the fraction of l's samples at or below x (seconds): the
// percentile table read as a piecewise-linear distribution function from
// (0, 0) through each (value, percentile), 1 past the last value.
func (l latDist) cdf(x float64) float64 {
	pv, pp := 0.0, 0.0
	for i, v := range l.val {
		if x < v {
			return (pp + (l.pct[i]-pp)*(x-pv)/(v-pv)) / 100
		}
		pv, pp = v, l.pct[i]
	}
	return 1
}

// mergedQuantile returns the q-quantile (0-1) of the union of ds's
// samples (each weighted by its n), by bisection on the summed
// distribution functions; NaN for no samples. For one distribution it is
// the table's own value where the table has q.
func mergedQuantile(ds []latDist, q float64) float64 {
	var n int64
	hi := 0.0
	for _, d := range ds {
		n += d.n
		hi = math.Max(hi, d.val[len(d.val)-1])
	}
	if n == 0 {
		return math.NaN()
	}
	f := func(x float64) float64 {
		s := 0.0
		for _, d := range ds {
			s += float64(d.n) * d.cdf(x)
		}
		return s / float64(n)
	}
	lo := 0.0
	for range 100 {
		mid := (lo + hi) / 2
		if f(mid) >= q {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// fioResult is the real side of a pair from an untraced run: each
// cgroup's (fio's cgroup= option of its jobs, "/" when none) MiB/s over
// the jobs' runtime and its share of the bytes (of every byte the device
// moved when the manifest has the device's counters and they exceed the
// jobs', else of the compared cgroups': those given weights, else every
// cgroup with I/O), for the compared cgroups, its p50 the median of its
// jobs' completion latencies together, and the total the same over every
// job. fio's runtime is the window here: the jobs of these files run side
// by side for the same time (time_based), so it is each side's contention
// window; fio's completion latency runs from the submission of the I/O to
// its completion, a bio's Q2C and the time fio takes to see it, for
// direct I/O (direct=1): a buffered job's times the page cache, so a
// cgroup with one (and the total, when any job is buffered) has a NaN
// p50, which no aim meets.
func fioResult(c *capture, weights map[string]int) (*result, error) {
	name := c.base() + ".fio.json"
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var out fioOutput
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	type cg struct {
		bw       float64
		bytes    int64
		dists    []latDist
		buffered bool // a job without direct=1
	}
	anyBuffered := false
	var runtimeMS int64
	byPath := map[string]*cg{}
	var all []latDist
	for _, j := range out.Jobs {
		g := j.Options["cgroup"]
		if g == "" {
			g = out.Global["cgroup"]
		}
		path := "/" + strings.Trim(g, "/")
		e := byPath[path]
		if e == nil {
			e = &cg{}
			byPath[path] = e
		}
		e.bw += j.Read.BWBytes + j.Write.BWBytes
		e.bytes += j.Read.IOBytes + j.Write.IOBytes
		runtimeMS = max(runtimeMS, j.Runtime)
		direct := j.Options["direct"]
		if direct == "" {
			direct = out.Global["direct"]
		}
		if direct != "1" {
			// Buffered: fio times the system call (the page cache, not
			// the device), and a cgroup with such a job has no p50.
			e.buffered, anyBuffered = true, true
			continue
		}
		for _, d := range []fioDir{j.Read, j.Write} {
			if l, ok := distOf(d); ok {
				e.dists = append(e.dists, l)
				all = append(all, l)
			}
		}
	}
	if len(byPath) == 0 {
		return nil, fmt.Errorf("%s: no jobs", name)
	}
	compared := func(path string) bool {
		if len(weights) > 0 {
			_, ok := weights[path]
			return ok
		}
		return byPath[path].bw > 0
	}
	// Shares are of every byte the device moved, as the diff's are of
	// every cgroup's bytes in the window: with the device's own counters
	// (the manifest's device_stat_delta over the run) the file system's
	// I/O outside the jobs (jbd2's journal, writeback: the root cgroup)
	// counts, and so does it in the total.
	sum, total := 0.0, 0.0
	var jobBytes int64
	for path, e := range byPath {
		total += e.bw
		jobBytes += e.bytes
		if compared(path) {
			sum += e.bw
		}
	}
	devBytes := c.Man.deviceBytes()
	byDevice := devBytes > jobBytes && runtimeMS > 0
	if byDevice {
		sum, total = float64(devBytes), float64(devBytes)/(float64(runtimeMS)/1e3)
	}
	share := func(e *cg) float64 {
		if byDevice {
			return float64(e.bytes) / sum
		}
		return e.bw / sum
	}
	r := &result{Mode: "untraced"}
	for _, path := range slices.Sorted(mapsKeys(byPath)) {
		e := byPath[path]
		id, ok := c.id(path)
		if !ok || !compared(path) || sum == 0 {
			continue
		}
		p50 := math.NaN()
		if !e.buffered {
			p50 = mergedQuantile(e.dists, 0.5)
		}
		r.Cgroups = append(r.Cgroups, cgroupResult{ID: id, Compared: true, RealMiBps: e.bw / (1 << 20),
			RealShare: share(e), RealP50: p50})
	}
	p50 := math.NaN()
	if !anyBuffered {
		p50 = mergedQuantile(all, 0.5)
	}
	r.Bandwidth.Real = figs{MiBps: total / (1 << 20), P50: p50}
	return r, nil
}
