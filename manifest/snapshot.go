package manifest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// System reads the kernel's files under Root ("/" on the machine itself;
// a copy of /sys and /proc in tests).
type System struct {
	Root string
}

func (s System) path(p string) string { return filepath.Join(s.Root, p) }

func (s System) read(p string) (string, error) {
	b, err := os.ReadFile(s.path(p))
	return strings.TrimSpace(string(b)), err
}

// ResolveDevice turns a DEVICE argument (/dev/loop0, loop0, 7:0) into the
// kernel's name of the block device.
func (s System) ResolveDevice(arg string) (string, error) {
	if strings.Contains(arg, ":") {
		l, err := os.Readlink(s.path("/sys/dev/block/" + arg))
		if err != nil {
			return "", fmt.Errorf("%s: no block device with that major:minor", arg)
		}
		return filepath.Base(l), nil
	}
	if strings.HasPrefix(arg, "/") || strings.HasPrefix(arg, ".") {
		var st syscall.Stat_t
		if err := syscall.Stat(arg, &st); err != nil {
			return "", fmt.Errorf("%s: %w", arg, err)
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFBLK {
			return "", fmt.Errorf("%s: not a block device", arg)
		}
		maj, min := (st.Rdev>>8)&0xfff|(st.Rdev>>32)&^0xfff, st.Rdev&0xff|(st.Rdev>>12)&^0xff
		return s.ResolveDevice(fmt.Sprintf("%d:%d", maj, min))
	}
	if _, err := os.Stat(s.path("/sys/class/block/" + arg)); err != nil {
		return "", fmt.Errorf("%s: no such block device in /sys/class/block", arg)
	}
	return arg, nil
}

// queueDir returns the queue/ directory of a disk or a partition's disk.
func (s System) queueDir(name string) string {
	q := "/sys/class/block/" + name + "/queue"
	if _, err := os.Stat(s.path(q)); err == nil {
		return q
	}
	return "/sys/class/block/" + name + "/../queue"
}

// SnapshotDevice reads a device's identity and queue settings.
func (s System) SnapshotDevice(name string) (Device, error) {
	base := "/sys/class/block/" + name
	d := Device{Name: name, Path: "/dev/" + name, Queue: map[string]string{}}
	mm, err := s.read(base + "/dev")
	if err != nil {
		return d, fmt.Errorf("%s: %w", name, err)
	}
	d.MajorMinor = mm
	if ma, mi, ok := strings.Cut(mm, ":"); ok {
		a, _ := strconv.ParseUint(ma, 10, 32)
		b, _ := strconv.ParseUint(mi, 10, 32)
		d.KernelDevT = uint32(a<<20 | b)
	}
	if v, err := s.read(base + "/size"); err == nil {
		n, _ := strconv.ParseInt(v, 10, 64)
		d.SizeBytes = n * 512
	}
	d.Model, _ = s.read(base + "/device/model")
	d.Vendor, _ = s.read(base + "/device/vendor")
	if l, err := os.Readlink(s.path(base + "/device/driver")); err == nil {
		d.Driver = filepath.Base(l)
	} else if _, err := os.Stat(s.path(base + "/loop")); err == nil {
		d.Driver = "loop"
		if bf, err := s.read(base + "/loop/backing_file"); err == nil {
			d.Queue["loop/backing_file"] = bf
		}
		if dio, err := s.read(base + "/loop/dio"); err == nil {
			d.Queue["loop/dio"] = dio
		}
	}
	qd := s.queueDir(name)
	ents, _ := os.ReadDir(s.path(qd))
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		if v, err := s.read(qd + "/" + e.Name()); err == nil {
			d.Queue[e.Name()] = v
		}
	}
	d.SchedulerLine = d.Queue["scheduler"]
	d.Rotational = atoiPtr(d.Queue["rotational"])
	d.NrRequests = atoiPtr(d.Queue["nr_requests"])
	d.LogicalBlockSize = atoiPtr(d.Queue["logical_block_size"])
	d.MaxSectorsKB = atoiPtr(d.Queue["max_sectors_kb"])
	d.WriteCache = d.Queue["write_cache"]
	mqs, _ := filepath.Glob(s.path(base + "/mq/[0-9]*"))
	if len(mqs) > 0 {
		n := len(mqs)
		d.NrHWQueues = &n
		sort.Strings(mqs)
		if v, err := os.ReadFile(filepath.Join(mqs[0], "nr_tags")); err == nil {
			d.HWQueueDepth = atoiPtr(strings.TrimSpace(string(v)))
		}
	}
	d.Iosched = map[string]any{}
	ients, _ := os.ReadDir(s.path(qd + "/iosched"))
	for _, e := range ients {
		if v, err := s.read(qd + "/iosched/" + e.Name()); err == nil {
			d.Iosched[e.Name()] = number(v)
		}
	}
	return d, nil
}

// ActiveScheduler returns the bracketed name of a queue/scheduler line.
func ActiveScheduler(line string) string {
	if i := strings.IndexByte(line, '['); i >= 0 {
		if j := strings.IndexByte(line[i:], ']'); j > 0 {
			return line[i+1 : i+j]
		}
	}
	return strings.TrimSpace(line)
}

// DiskStat reads /sys/class/block/NAME/stat.
func (s System) DiskStat(name string) (map[string]int64, error) {
	t, err := s.read("/sys/class/block/" + name + "/stat")
	if err != nil {
		return nil, err
	}
	st, err := ParseDiskStat(t)
	if err != nil {
		return nil, fmt.Errorf("/sys/class/block/%s/stat: %w", name, err)
	}
	return st, nil
}

// SnapshotHost reads the kernel release and the machine's size.
func (s System) SnapshotHost() Host {
	h := Host{NCPUs: ncpus(s)}
	var u syscall.Utsname
	if s.Root == "/" || s.Root == "" {
		if syscall.Uname(&u) == nil {
			h.KernelRelease, h.KernelVersion, h.Machine = utsString(u.Release[:]), utsString(u.Version[:]), utsString(u.Machine[:])
		}
	}
	if h.KernelRelease == "" {
		h.KernelRelease, _ = s.read("/proc/sys/kernel/osrelease")
	}
	if f, err := os.Open(s.path("/proc/meminfo")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				h.MemTotalKiB, _ = strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			}
		}
		f.Close()
	}
	return h
}

func ncpus(s System) int {
	t, err := s.read("/sys/devices/system/cpu/possible")
	if err != nil {
		return 0
	}
	n := 0
	for _, r := range strings.Split(t, ",") {
		a, b, ok := strings.Cut(r, "-")
		x, _ := strconv.Atoi(a)
		if !ok {
			n++
			continue
		}
		y, _ := strconv.Atoi(b)
		n += y - x + 1
	}
	return n
}

func utsString(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}

// Hierarchy is the cgroup hierarchy that holds the io controller: the ids
// block traces record are its directories' inode numbers.
type Hierarchy struct {
	Mount string // e.g. /sys/fs/cgroup/blkio (v1) or /sys/fs/cgroup (v2)
	V2    bool
}

// Name is the manifest's hierarchy label.
func (h Hierarchy) Name() string {
	if h.V2 {
		return "cgroup v2"
	}
	return "cgroup v1 blkio"
}

// IOHierarchy finds the io controller's hierarchy from /proc/self/mountinfo:
// a cgroup (v1) mount with the blkio option, else a cgroup2 mount whose
// cgroup.controllers lists io.
func (s System) IOHierarchy() (Hierarchy, error) {
	f, err := os.Open(s.path("/proc/self/mountinfo"))
	if err != nil {
		return Hierarchy{}, err
	}
	defer f.Close()
	var v2 []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 {
			continue
		}
		switch qf[0] {
		case "cgroup":
			for _, o := range strings.Split(qf[2], ",") {
				if o == "blkio" {
					return Hierarchy{Mount: pf[4]}, nil
				}
			}
		case "cgroup2":
			v2 = append(v2, pf[4])
		}
	}
	for _, m := range v2 {
		if c, err := os.ReadFile(filepath.Join(s.Root, m, "cgroup.controllers")); err == nil {
			for _, w := range strings.Fields(string(c)) {
				if w == "io" {
					return Hierarchy{Mount: m, V2: true}, nil
				}
			}
		}
	}
	return Hierarchy{}, fmt.Errorf("no cgroup hierarchy with the io (blkio) controller is mounted")
}

// CgroupIDs walks the hierarchy: path ("/" root) by trace id. The root's
// id is 1 whatever its inode (the kernel's root kernfs node id).
func (s System) CgroupIDs(h Hierarchy) map[uint64]string {
	out := map[uint64]string{1: "/"}
	root := filepath.Join(s.Root, h.Mount)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == root {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			out[st.Ino] = "/" + filepath.ToSlash(strings.TrimPrefix(p, root+"/"))
		}
		return nil
	})
	return out
}

// CgroupCounters reads a cgroup's kernel counters for device mm ("7:0"):
// v1 blkio.bfq.io_serviced / io_service_bytes as "bfq.io_serviced.Read"
// etc., v2 io.stat fields as "io.stat.rios" etc. Counters the cgroup does
// not have for the device are absent.
func (s System) CgroupCounters(h Hierarchy, path, mm string) map[string]int64 {
	dir := filepath.Join(s.Root, h.Mount, path)
	out := map[string]int64{}
	if h.V2 {
		b, _ := os.ReadFile(filepath.Join(dir, "io.stat"))
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || f[0] != mm {
				continue
			}
			for _, kv := range f[1:] {
				if k, v, ok := strings.Cut(kv, "="); ok {
					if n, err := strconv.ParseInt(v, 10, 64); err == nil {
						out["io.stat."+k] = n
					}
				}
			}
		}
		return out
	}
	for _, file := range []string{"io_serviced", "io_service_bytes"} {
		b, err := os.ReadFile(filepath.Join(dir, "blkio.bfq."+file))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) == 3 && f[0] == mm {
				if n, err := strconv.ParseInt(f[2], 10, 64); err == nil {
					out["bfq."+file+"."+f[1]] = n
				}
			}
		}
	}
	return out
}

// CgroupSettings fills a cgroup's weights and limits for device mm.
func (s System) CgroupSettings(h Hierarchy, path, mm string) Cgroup {
	dir := filepath.Join(s.Root, h.Mount, path)
	c := Cgroup{Path: path, Name: path, Hierarchy: h.Name()}
	if path != "/" {
		c.Name = strings.TrimPrefix(path, "/")
	}
	readw := func(files ...string) *int {
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				continue
			}
			if w := weightFor(string(b), mm); w != nil {
				return w
			}
		}
		return nil
	}
	if path != "/" {
		if h.V2 {
			c.BFQWeight = readw("io.bfq.weight")
		} else {
			// blkio.bfq.weight_device holds per-device overrides only.
			if b, err := os.ReadFile(filepath.Join(dir, "blkio.bfq.weight_device")); err == nil {
				c.BFQWeight = deviceLine(string(b), mm)
			}
			if c.BFQWeight == nil {
				c.BFQWeight = readw("blkio.bfq.weight")
			}
		}
	}
	if h.V2 {
		if b, err := os.ReadFile(filepath.Join(dir, "io.weight")); err == nil {
			c.IOWeight = strings.TrimSpace(string(b))
		}
		if b, err := os.ReadFile(filepath.Join(dir, "io.max")); err == nil {
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if l != "" {
					c.IOMax = append(c.IOMax, l)
				}
			}
		}
	}
	return c
}

// weightFor reads a weight file: a bare number (v1 blkio.bfq.weight) or
// "default N" plus "MAJ:MIN N" lines (io.bfq.weight, io.weight).
func weightFor(text, mm string) *int {
	if w := deviceLine(text, mm); w != nil {
		return w
	}
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 1:
			return atoiPtr(f[0])
		case len(f) == 2 && f[0] == "default":
			return atoiPtr(f[1])
		}
	}
	return nil
}

func deviceLine(text, mm string) *int {
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && f[0] == mm {
			return atoiPtr(f[1])
		}
	}
	return nil
}

// Process reads what the kernel says of a live process: comm, nice,
// ioprio and its io cgroup. ok is false when the process is gone.
func (s System) Process(pid int, h Hierarchy) (Process, bool) {
	p := Process{PID: pid}
	comm, err := s.read(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return p, false
	}
	p.Comm = comm
	if st, err := s.read(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// pid (comm) state ... : fields after the last ')' start at field 3.
		if i := strings.LastIndexByte(st, ')'); i >= 0 {
			f := strings.Fields(st[i+1:])
			if len(f) > 16 {
				p.Nice = atoiPtr(f[16]) // field 19
			}
		}
	}
	if s.Root == "/" || s.Root == "" {
		if prio, err := IOPrioGet(pid); err == nil {
			p.IOPrio = &prio
			p.IOPrioText = IOPrioText(prio, p.Nice)
		}
	}
	if cg, err := s.read(fmt.Sprintf("/proc/%d/cgroup", pid)); err == nil {
		for _, l := range strings.Split(cg, "\n") {
			parts := strings.SplitN(l, ":", 3)
			if len(parts) != 3 {
				continue
			}
			if h.V2 && parts[0] == "0" {
				p.Cgroup = parts[2]
			}
			if !h.V2 {
				for _, c := range strings.Split(parts[1], ",") {
					if c == "blkio" {
						p.Cgroup = parts[2]
					}
				}
			}
		}
	}
	return p, true
}

// IOPrio classes (include/uapi/linux/ioprio.h).
const (
	IOPrioClassNone  = 0
	IOPrioClassRT    = 1
	IOPrioClassBE    = 2
	IOPrioClassIdle  = 3
	ioprioClassShift = 13
)

// IOPrioGet is ioprio_get(IOPRIO_WHO_PROCESS, pid).
func IOPrioGet(pid int) (int, error) {
	const ioprioWhoProcess = 1
	r, _, e := syscall.Syscall(syscall.SYS_IOPRIO_GET, ioprioWhoProcess, uintptr(pid), 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// IOPrioText renders an ioprio as ionice does: "class/level"; class none
// means "derived from nice": best-effort at (nice+20)/5.
func IOPrioText(prio int, nice *int) string {
	class, level := prio>>ioprioClassShift, prio&((1<<ioprioClassShift)-1)
	switch class {
	case IOPrioClassRT:
		return fmt.Sprintf("realtime/%d", level)
	case IOPrioClassBE:
		return fmt.Sprintf("best-effort/%d", level)
	case IOPrioClassIdle:
		return "idle"
	}
	if nice != nil {
		return fmt.Sprintf("none (best-effort/%d from nice %d)", (*nice+20)/5, *nice)
	}
	return "none"
}

// ClockOffsetNs returns CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns: what
// turns a trace time (trace_clock=mono) into wall clock.
func ClockOffsetNs() int64 {
	var mono syscall.Timespec
	const clockMonotonic = 1
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&mono)), 0)
	real := time.Now().UnixNano()
	return real - mono.Nano()
}

func atoiPtr(s string) *int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return nil
	}
	return &n
}

// number returns an integer sysfs value as int64, anything else as text.
func number(v string) any {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n
	}
	return v
}
