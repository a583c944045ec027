package manifest

import (
	"fmt"
	"sort"
	"time"
)

// Snapshot describes device dev (a DEVICE argument) now, without a trace:
// host, device, scheduler and tunables, every cgroup of the io hierarchy
// with its settings and its counters for the device, and the processes
// pids. With since (an earlier Snapshot of the same device) the earlier
// counters become the before values and the deltas are filled in.
func Snapshot(sys System, dev string, pids []int, since *Manifest) (*Manifest, error) {
	name, err := sys.ResolveDevice(dev)
	if err != nil {
		return nil, err
	}
	d, err := sys.SnapshotDevice(name)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Name: name, Tool: "tracesched manifest", CreatedUTC: time.Now().UTC().Format(time.RFC3339),
		Host: sys.SnapshotHost(), Device: d, Devices: []Device{d}, Scheduler: ActiveScheduler(d.SchedulerLine),
		IoschedTunables: d.Iosched, TunablesRequested: []string{}}
	st, err := sys.DiskStat(name)
	if err != nil {
		return nil, err
	}
	m.Devices[0].Iosched = nil // Manifest.IoschedTunables holds them
	m.Device.Iosched = nil
	h, herr := sys.IOHierarchy()
	prev := map[uint64]Cgroup{}
	if since != nil {
		if since.Device.MajorMinor != d.MajorMinor {
			return nil, fmt.Errorf("--since names device %s (%s), not %s (%s)", since.Device.Name, since.Device.MajorMinor, name, d.MajorMinor)
		}
		for _, c := range since.Cgroups {
			prev[c.ID] = c
		}
		if pre := since.Recording; pre != nil && pre.Settings["device_stat"] != "" {
			if b, err := ParseDiskStat(pre.Settings["device_stat"]); err == nil {
				m.DeviceStatDelta = Delta(b, st)
			}
		}
	}
	m.Recording = &Recording{Mechanism: "snapshot (no trace)", Settings: map[string]string{"device_stat": statText(st)}}
	if herr == nil {
		ids := sys.CgroupIDs(h)
		keys := make([]uint64, 0, len(ids))
		for id := range ids {
			keys = append(keys, id)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		for _, id := range keys {
			c := sys.CgroupSettings(h, ids[id], d.MajorMinor)
			c.ID = id
			c.IDPrinted = fmt.Sprintf("%x,%x", id&0xffffffff, id>>32)
			now := sys.CgroupCounters(h, ids[id], d.MajorMinor)
			if p, ok := prev[id]; ok && since != nil {
				c.CountersBefore, c.CountersAfter = p.CountersAfter, now
				dl := Delta(c.CountersBefore, c.CountersAfter)
				if v, ok := dl["bfq.io_serviced.Read"]; ok {
					w, br, bw := dl["bfq.io_serviced.Write"], dl["bfq.io_service_bytes.Read"], dl["bfq.io_service_bytes.Write"]
					c.KernelServicedReadDelta, c.KernelServicedWriteDelta = &v, &w
					c.KernelBytesReadDelta, c.KernelBytesWriteDelta = &br, &bw
				}
			} else {
				c.CountersAfter = now
			}
			m.Cgroups = append(m.Cgroups, c)
		}
		m.CgroupIDNote = "cgroup ids are kernfs ids of the " + h.Name() + " hierarchy (" + h.Mount + ") = inode number of the cgroup directory; root = 1"
	}
	for _, pid := range pids {
		if p, ok := sys.Process(pid, h); ok {
			m.Processes = append(m.Processes, p)
		} else {
			return nil, fmt.Errorf("--pid %d: no such process", pid)
		}
	}
	return m, nil
}

func statText(st map[string]int64) string {
	s := ""
	for i, k := range DiskStatFields {
		v, ok := st[k]
		if !ok {
			break
		}
		if i > 0 {
			s += " "
		}
		s += fmt.Sprint(v)
	}
	return s
}
