package synth

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tracesched/tracesched/trace"
)

// Spec is a parsed job file: the jobs, the device that times them, and the
// cgroups the jobs name (ids assigned from 1 in order of first mention,
// with the weights the file asks for), ready for replay options.
type Spec struct {
	Jobs        []Job
	Device      DeviceSpec
	Weights     map[uint64]int    // cgroup id -> weight, for cgroups given a cgroup_weight
	CgroupPaths map[uint64]string // cgroup id -> path
}

// SyntaxError reports a bad line of a job file.
type SyntaxError struct {
	File string
	Line int
	Err  error
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *SyntaxError) Unwrap() error { return e.Err }

// Parse reads a job file in a small subset of fio's format: [sections] of
// key=value lines, '#' and ';' comments, a [global] section whose keys
// every later job inherits, and a [device] section (a tracesched
// extension) with latency=, bandwidth= and depth=. Job keys: rw, bs, size,
// offset, offset_increment, numjobs, iodepth, ioengine (psync/sync/pvsync
// make the job synchronous), direct, sync, thinktime (µs unless suffixed),
// rate, startdelay and runtime (s unless suffixed), number_ios, rwmixread,
// cgroup, cgroup_weight, pid. Unknown keys are errors, except fio keys
// that do not change the stream (filename, time_based, group_reporting,
// ...). name is used in error messages.
func Parse(r io.Reader, name string) (*Spec, error) {
	sp := &Spec{Weights: map[uint64]int{}, CgroupPaths: map[uint64]string{}}
	cgIDs := map[string]uint64{}
	global := map[string]string{}
	type section struct {
		name string
		line int
		kv   map[string]string
		keys []string
	}
	var sections []*section
	var cur *section
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' || s[0] == ';' {
			continue
		}
		if s[0] == '[' {
			if !strings.HasSuffix(s, "]") || len(s) < 3 {
				return nil, &SyntaxError{name, line, fmt.Errorf("bad section header %q", s)}
			}
			cur = &section{name: s[1 : len(s)-1], line: line, kv: map[string]string{}}
			sections = append(sections, cur)
			continue
		}
		if cur == nil {
			return nil, &SyntaxError{name, line, fmt.Errorf("key outside a section")}
		}
		k, v, _ := strings.Cut(s, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		cur.kv[k] = v
		cur.keys = append(cur.keys, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	for _, sec := range sections {
		switch sec.name {
		case "global":
			for _, k := range sec.keys {
				global[k] = sec.kv[k]
			}
			continue
		case "device":
			for _, k := range sec.keys {
				if err := setDevice(&sp.Device, k, sec.kv[k]); err != nil {
					return nil, &SyntaxError{name, sec.line, err}
				}
			}
			continue
		}
		kv := map[string]string{}
		var keys []string
		for k, v := range global {
			kv[k] = v
		}
		for _, k := range sortedKeys(global) {
			keys = append(keys, k)
		}
		for _, k := range sec.keys {
			if _, ok := kv[k]; !ok {
				keys = append(keys, k)
			}
			kv[k] = sec.kv[k]
		}
		j := Job{Name: sec.name}
		numjobs, incr := 1, uint64(0)
		for _, k := range keys {
			v := kv[k]
			var err error
			switch k {
			case "numjobs":
				numjobs, err = strconv.Atoi(v)
			case "offset_increment":
				incr, err = parseSize(v)
			case "cgroup":
				p := "/" + strings.Trim(v, "/")
				if p != "/" {
					id, ok := cgIDs[p]
					if !ok {
						id = uint64(len(cgIDs) + 1)
						cgIDs[p] = id
						sp.CgroupPaths[id] = p
					}
					j.Cgroup, j.CgroupPath = id, p
				}
			default:
				err = setJob(&j, k, v)
			}
			if err != nil {
				return nil, &SyntaxError{name, sec.line, fmt.Errorf("job %s: %s=%s: %w", sec.name, k, v, err)}
			}
		}
		if j.CgroupWeight != 0 && j.Cgroup != 0 {
			sp.Weights[j.Cgroup] = j.CgroupWeight
		}
		for i := 0; i < numjobs; i++ {
			jj := j
			jj.Offset += uint64(i) * incr
			if numjobs > 1 {
				jj.Name = fmt.Sprintf("%s.%d", j.Name, i)
				if jj.PID != 0 {
					jj.PID += uint32(i)
				}
			}
			sp.Jobs = append(sp.Jobs, jj)
		}
	}
	return sp, nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for k := i; k > 0 && ks[k] < ks[k-1]; k-- {
			ks[k], ks[k-1] = ks[k-1], ks[k]
		}
	}
	return ks
}

func setDevice(d *DeviceSpec, k, v string) error {
	var err error
	switch k {
	case "latency":
		d.Latency, err = parseDuration(v, time.Microsecond)
	case "bandwidth":
		d.Bandwidth, err = parseSize(v)
	case "depth":
		d.Depth, err = strconv.Atoi(v)
	case "dev":
		maj, min, ok := strings.Cut(v, ":")
		if !ok {
			maj, min, ok = strings.Cut(v, ",")
		}
		a, e1 := strconv.ParseUint(maj, 10, 32)
		b, e2 := strconv.ParseUint(min, 10, 32)
		if !ok || e1 != nil || e2 != nil {
			return fmt.Errorf("bad device %q", v)
		}
		d.Dev = trace.MkDev(uint32(a), uint32(b))
	default:
		return fmt.Errorf("unknown device key %q", k)
	}
	return err
}

func setJob(j *Job, k, v string) error {
	var err error
	var n uint64
	switch k {
	case "rw", "readwrite":
		switch v {
		case "read":
			j.RW = Read
		case "write":
			j.RW = Write
		case "randread":
			j.RW = RandRead
		case "randwrite":
			j.RW = RandWrite
		case "rw", "readwrite":
			j.RW = ReadWrite
		case "randrw":
			j.RW = RandRW
		default:
			return fmt.Errorf("unknown pattern")
		}
	case "bs", "blocksize":
		n, err = parseSize(v)
		j.BS = uint32(n)
	case "size":
		j.Size, err = parseSize(v)
	case "offset":
		j.Offset, err = parseSize(v)
	case "iodepth":
		j.IODepth, err = strconv.Atoi(v)
	case "ioengine":
		switch v {
		case "psync", "sync", "pvsync", "pvsync2", "vsync":
			j.Sync = true
		default:
			j.Sync = false
		}
	case "direct":
		j.Direct = v == "1" || v == "true"
	case "sync":
		if v == "1" || v == "true" || v == "sync" {
			j.Direct = true
		}
	case "thinktime":
		j.ThinkTime, err = parseDuration(v, time.Microsecond)
	case "rate":
		j.Rate, err = parseSize(v)
	case "startdelay":
		j.Start, err = parseDuration(v, time.Second)
	case "runtime":
		j.Runtime, err = parseDuration(v, time.Second)
	case "number_ios":
		j.IOs, err = strconv.Atoi(v)
	case "rwmixread":
		j.RWMixRead, err = strconv.Atoi(v)
	case "cgroup_weight":
		j.CgroupWeight, err = strconv.Atoi(v)
	case "pid":
		n, err = strconv.ParseUint(v, 10, 32)
		j.PID = uint32(n)
	case "comm":
		j.Comm = v
	case "filename", "time_based", "group_reporting", "allow_mounted_write", "ioscheduler",
		"cgroup_nodelete", "name", "randrepeat", "norandommap", "invalidate":
	default:
		return fmt.Errorf("unknown key")
	}
	return err
}

// parseSize parses a byte count with fio's binary suffixes (4k, 1m, 2g; kib, mib too).
func parseSize(v string) (uint64, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	mult := uint64(1)
	for _, suf := range []struct {
		s string
		m uint64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
		{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"tb", 1 << 40},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40}, {"b", 1}} {
		if strings.HasSuffix(s, suf.s) {
			s, mult = strings.TrimSuffix(s, suf.s), suf.m
			break
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad size %q", v)
	}
	return n * mult, nil
}

// parseDuration parses a duration; a bare number counts in unit.
func parseDuration(v string, unit time.Duration) (time.Duration, error) {
	s := strings.TrimSpace(v)
	if n, err := strconv.ParseUint(s, 10, 63); err == nil {
		return time.Duration(n) * unit, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("bad duration %q", v)
	}
	return d, nil
}
