package arrowfile

import (
	"fmt"
	"math/rand/v2"

	"github.com/tracesched/tracesched/trace"
)

// arrowGenEvents generates n events shaped like a blktrace capture of a few
// processes in two cgroups doing random 4k-1M I/O on two devices, with BFQ
// messages, notify records and the occasional remap, split and requeue.
// Times increase (1-200 us apart), sequence numbers count per CPU. Every
// action, every payload field and both cgroup forms (id only, id and path)
// occur when n is a few thousand.
func arrowGenEvents(n int, seed uint64) []trace.Event {
	rng := rand.New(rand.NewPCG(seed, 1))
	comms := []string{"fio", "kworker/u4:2", "jbd2/vda1-8", "postgres", ""}
	paths := map[uint64]string{1181: "/sys/fs/cgroup/w100", 1201: "/sys/fs/cgroup/w900"}
	devs := []trace.Dev{trace.MkDev(8, 0), trace.MkDev(259, 1)}
	var seq [2]uint32
	var out []trace.Event
	t := trace.Time(0)
	add := func(e trace.Event) {
		e.Time = t
		t += trace.Time(1000 + rng.IntN(200000))
		if !e.Action.IsNotify() || e.Action == trace.ActionMessage {
			seq[e.CPU]++
			e.Seq = seq[e.CPU]
		}
		out = append(out, e)
	}
	add(trace.Event{Action: trace.ActionTimestamp, CPU: 0, WallSec: 1732950000, WallNsec: 123456789})
	for len(out) < n {
		cpu := uint32(rng.IntN(2))
		pid := uint32(1000 + rng.IntN(4))
		comm := comms[pid%uint32(len(comms))]
		cg := uint64(1181)
		if pid%2 == 1 {
			cg = 1201
		}
		path := ""
		if rng.IntN(2) == 0 {
			path = paths[cg]
		}
		dev := devs[rng.IntN(len(devs))]
		sector := uint64(rng.Int64N(1 << 30))
		bytes := uint32(4096 << rng.IntN(9))
		cat := trace.CatRead
		if rng.IntN(3) == 0 {
			cat = trace.CatWrite | trace.CatSync
		}
		base := trace.Event{CPU: cpu, Dev: dev, Sector: sector, Bytes: bytes, PID: pid, Comm: comm, Cgroup: cg, CgroupPath: path}
		ev := func(a trace.Action, c trace.Category) trace.Event {
			e := base
			e.Action, e.Cat = a, cat|c
			return e
		}
		switch rng.IntN(40) {
		case 0:
			add(trace.Event{Action: trace.ActionProcess, CPU: cpu, PID: pid, Text: comm})
		case 1:
			e := ev(trace.ActionRemap, trace.CatQueue)
			e.FromDev, e.FromSector = trace.MkDev(253, 2), sector-2048
			add(e)
		case 2:
			e := ev(trace.ActionSplit, trace.CatQueue)
			e.SplitSector = sector + 1024
			add(e)
		case 3:
			add(ev(trace.ActionPlug, trace.CatQueue))
			e := ev(trace.ActionUnplugIO+trace.Action(rng.IntN(2)), trace.CatQueue)
			e.Depth = uint64(1 + rng.IntN(8))
			add(e)
		case 4:
			add(ev(trace.ActionRequeue, trace.CatRequeue))
		case 5:
			add(ev(trace.ActionSleepRQ, trace.CatQueue))
			add(ev(trace.ActionBounce, trace.CatQueue))
			add(ev(trace.ActionAbort, trace.CatQueue))
			e := ev(trace.ActionZonePlug, trace.CatQueue)
			add(e)
			e = ev(trace.ActionZoneUnplug, trace.CatQueue)
			e.Depth = 3
			add(e)
			add(ev(trace.ActionDrvData, trace.CatDrvData))
		}
		add(ev(trace.ActionQueue, trace.CatQueue))
		if rng.IntN(4) == 0 {
			add(ev(trace.ActionBackMerge+trace.Action(rng.IntN(2)), trace.CatQueue))
		} else {
			add(ev(trace.ActionGetRQ, trace.CatQueue))
			add(ev(trace.ActionInsert, trace.CatQueue))
			for _, q := range []string{
				fmt.Sprintf("bfq%d%s insert_request", pid, map[bool]string{true: "S", false: "A"}[cat.IsSync()]),
				"bfq schedule dispatch",
				"bfqSHARED-S dispatched",
				fmt.Sprintf("cfq%dSN slice expired t=0", pid),
				"not a scheduler line",
			}[rng.IntN(5):][:1] {
				add(trace.Event{Action: trace.ActionMessage, CPU: cpu, PID: pid, Cgroup: cg, CgroupPath: path, Comm: comm, Text: q})
			}
			add(ev(trace.ActionIssue, trace.CatIssue))
			c := ev(trace.ActionComplete, trace.CatComplete)
			c.PID = 0
			if rng.IntN(50) == 0 {
				c.Error = -5
			}
			add(c)
		}
	}
	return out[:n]
}

// arrowGenRequests generates n requests in creation order, with the NoTime
// and flag cases of a real capture: in flight at the start, incomplete at
// the end, merged away, remapped, requeued.
func arrowGenRequests(n int, seed uint64) []trace.Request {
	rng := rand.New(rand.NewPCG(seed, 2))
	comms := []string{"fio", "kworker/u4:2", "", "postgres"}
	out := make([]trace.Request, n)
	t := trace.Time(0)
	for i := range out {
		t += trace.Time(2000 + rng.IntN(100000))
		pid := uint32(1000 + rng.IntN(4))
		r := trace.Request{
			ID: uint64(i + 1), Dev: trace.MkDev(8, 0), Sector: uint64(rng.Int64N(1 << 30)), Bytes: uint32(4096 << rng.IntN(9)),
			Cat: trace.CatRead, PID: pid, Comm: comms[pid%4], Cgroup: 1181 + 20*uint64(pid%2),
			Queue: t, Get: t + 1500, Insert: t + 2500, Issue: t + trace.Time(5000+rng.IntN(500000)),
			Bios: 1 + uint32(rng.IntN(3)), FirstBio: uint32(i / 4),
		}
		r.Complete = r.Issue + trace.Time(100000+rng.IntN(5000000))
		if r.Bios > 1 {
			r.BackMerges = r.Bios - 1
		}
		switch rng.IntN(30) {
		case 0:
			r.Queue, r.Get, r.Insert, r.Flags = trace.NoTime, trace.NoTime, trace.NoTime, trace.FlagNoQueue
			r.Bios = 0
		case 1:
			r.Complete, r.Flags = trace.NoTime, trace.FlagIncomplete
		case 2:
			r.Issue, r.Complete, r.Flags = trace.NoTime, trace.NoTime, trace.FlagMergedAway
		case 3:
			r.FromDev, r.FromSector, r.Flags = trace.MkDev(253, 2), r.Sector-2048, trace.FlagRemapped
		case 4:
			r.Requeues, r.Error = 1, -5
			r.FrontMerges = 1
			r.Flags = trace.FlagSplit | trace.FlagPartial
		}
		if rng.IntN(3) == 0 {
			r.Cat = trace.CatWrite | trace.CatSync
		}
		out[i] = r
	}
	return out
}
