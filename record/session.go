package record

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tracesched/tracesched/manifest"
)

// Options configure one recording.
type Options struct {
	Devices  []string      // DEVICE arguments: /dev/loop0, loop0 or 7:0
	Dir      string        // output directory (created)
	Duration time.Duration // stop after this long (0: no limit)
	MaxSize  int64         // stop writing past this many bytes of trace (0: no limit)
	BufferKB int           // ring buffer per CPU, KiB (0: 65536)
	NoCgroup bool          // no cgroup ids (blk_cgroup=0): Debian's blkparse reads the files
	NoNotify bool          // act_mask without notify: no scheduler messages
	// Drain is "live" (read the ring buffer while tracing) or "after" (only
	// once tracing stopped: nothing competes with the workload for CPU, but
	// the buffer must hold the whole capture).
	Drain   string
	Command []string // run this and stop when it exits (nil: no command)
	// CommandIO are the command's standard streams.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Force          bool          // reset a device trace found enabled instead of refusing
	Wait           time.Duration // wait this long for another recorder to finish (0: refuse at once)
	// ReaderNice is the nice value of the thread that reads the ring buffer
	// and writes the files (0: the recorder's own).
	ReaderNice int
	// Log receives progress and warnings (stderr).
	Log io.Writer
	// Signals interrupt the recording (SIGINT, SIGTERM); the first stops
	// tracing and drains, a second skips the drain.
	Signals <-chan os.Signal
	// Argv is the command line, for the manifest.
	Argv []string
}

// actMaskAll is every category the blk tracer knows (trace/act_mask).
const actMaskAll = "read,write,flush,sync,queue,requeue,issue,complete,fs,pc,notify,ahead,meta,discard,drv_data,fua"

// ErrPartial marks a recording that ended early or lost data: the
// manifest says why.
var ErrPartial = errors.New("capture is partial")

type devState struct {
	name     string
	snap     manifest.Device
	sectors  int64
	before   map[string]string // trace/* before
	filters  map[string]string // trace/* read back after setting
	enabled  bool              // we enabled its trace
	statPre  map[string]int64
	statPost map[string]int64
}

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, "tracesched record: "+format+"\n", args...)
	}
}

// Run records, writes the per-CPU files and manifest.json into o.Dir and
// returns the manifest. It leaves tracefs as it found it on every path
// out (error, signal, full disk). The error is ErrPartial (wrapped) when
// the capture was written but is partial.
func Run(o Options) (_ *manifest.Manifest, err error) {
	sys := manifest.System{Root: "/"}
	if o.BufferKB == 0 {
		o.BufferKB = 65536
	}
	if o.Drain == "" {
		o.Drain = "live"
	}
	if o.Drain != "live" && o.Drain != "after" {
		return nil, fmt.Errorf("--drain %q: want live or after", o.Drain)
	}
	if len(o.Devices) == 0 {
		return nil, errors.New("no DEVICE given")
	}
	var devs []*devState
	seen := map[string]bool{}
	for _, a := range o.Devices {
		name, err := sys.ResolveDevice(a)
		if err != nil {
			return nil, err
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		if _, err := os.Stat("/sys/class/block/" + name + "/trace/enable"); err != nil {
			return nil, fmt.Errorf("%s: no /sys/class/block/%s/trace (the kernel lacks CONFIG_BLK_DEV_IO_TRACE)", a, name)
		}
		devs = append(devs, &devState{name: name})
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	lk, err := lock(o.Wait, o.Signals, o.logf)
	if err != nil {
		return nil, err
	}
	defer lk.Close()
	tfs, err := OpenTracefs()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := tfs.Close(); err != nil {
			o.logf("WARNING: %v", err)
		}
	}()
	if why := tfs.busy(); why != "" {
		return nil, fmt.Errorf("ftrace is in use: %s; refusing to record", why)
	}
	for _, d := range devs {
		d.before = readDevTrace(d.name)
		if d.before["enable"] == "1" {
			if !o.Force {
				return nil, fmt.Errorf("%s: block tracing is already enabled on it (blktrace running, or left by a recorder that was killed; start_lba=%s end_lba=%s pid=%s); --force resets it",
					d.name, d.before["start_lba"], d.before["end_lba"], d.before["pid"])
			}
			o.logf("WARNING: %s: trace was enabled (start_lba=%s end_lba=%s): resetting it (--force)", d.name, d.before["start_lba"], d.before["end_lba"])
		}
	}

	// The context, before anything changes.
	m := &manifest.Manifest{Name: devs[0].name, Tool: "tracesched record", Command: strings.Join(o.Argv, " "),
		CreatedUTC: time.Now().UTC().Format(time.RFC3339), Host: sys.SnapshotHost(), TunablesRequested: []string{}}
	for _, d := range devs {
		if d.snap, err = sys.SnapshotDevice(d.name); err != nil {
			return nil, err
		}
		d.sectors = d.snap.SizeBytes / 512
	}
	hier, herr := sys.IOHierarchy()
	if herr != nil {
		o.logf("WARNING: %v: cgroups will not be described", herr)
	}
	cgIDs := map[uint64]string{}
	cgStart := map[uint64]manifest.Cgroup{}
	if herr == nil {
		cgIDs = sys.CgroupIDs(hier)
		for id, p := range cgIDs {
			cgStart[id] = sys.CgroupSettings(hier, p, devs[0].snap.MajorMinor)
		}
	}
	falseV := false
	m.Complete = &falseV
	m.IncompleteReasons = []string{"recording in progress (a manifest that still says so after the recorder ended means it was killed)"}
	mpath := filepath.Join(o.Dir, manifest.FileName)
	if err := manifest.Write(mpath, m); err != nil {
		return nil, err
	}
	// Room for the final manifest, should the trace fill the disk.
	if err := manifest.Reserve(mpath, 256<<10); err != nil {
		return nil, err
	}
	final := false
	defer func() {
		// A failure after this point leaves a manifest that says so (this
		// runs after tracefs was restored).
		if !final && err != nil {
			m.IncompleteReasons = []string{"recording failed: " + err.Error()}
			if werr := writeManifest(mpath, m); werr != nil {
				o.logf("WARNING: %v", werr)
			}
		}
	}()

	// tracefs: save, then set up; restore on every way out.
	saved, err := tfs.save()
	if err != nil {
		return nil, err
	}
	rec := &manifest.Recording{Mechanism: "ftrace blk tracer (current_tracer=blk, /sys/block/DEV/trace/enable=1), trace_options bin+context-info, read from " + tfs.Dir + "/trace_pipe, 16-byte ftrace header stripped, split per CPU, sequence numbers and PROCESS/TIMESTAMP notes synthesized",
		NoCgroup: o.NoCgroup, DeviceFilters: map[string]map[string]string{}}
	m.Recording = rec
	rec.TracefsBefore = map[string]string{"tracing_on": saved.tracingOn, "current_tracer": saved.tracer,
		"trace_clock": saved.clock, "buffer_size_kb": strconv.Itoa(saved.bufferKB)}
	for k, v := range saved.options {
		rec.TracefsBefore["options/"+k] = v
	}
	restored := false
	restore := func() {
		if restored {
			return
		}
		restored = true
		var errs []string
		if err := tfs.Write("tracing_on", "0"); err != nil {
			errs = append(errs, err.Error())
		}
		for _, d := range devs {
			if d.enabled {
				if err := writeFile("/sys/class/block/"+d.name+"/trace/enable", "0"); err != nil {
					errs = append(errs, err.Error())
				}
			}
		}
		errs = append(errs, tfs.restore(saved)...)
		rec.Restored = len(errs) == 0
		rec.RestoreErrors = errs
		for _, e := range errs {
			o.logf("WARNING: restoring tracefs: %s", e)
		}
	}
	defer restore()

	ncpu := m.Host.NCPUs
	if ncpu == 0 {
		ncpu = 1
	}
	if err := setup(tfs, o, devs); err != nil {
		return nil, err
	}
	rec.Settings = map[string]string{}
	for _, k := range []string{"current_tracer", "trace_clock", "buffer_size_kb"} {
		v, _ := tfs.Read(k)
		rec.Settings[k] = bracketed(v)
	}
	for _, op := range recordOptions {
		v, _ := tfs.Read("options/" + op)
		rec.Settings["options/"+op] = v
	}
	for _, d := range devs {
		rec.DeviceFilters[d.name] = d.filters
		rec.DeviceFilters[d.name+" before"] = d.before
	}

	tdevs := make([]traceDev, len(devs))
	for i, d := range devs {
		tdevs[i] = traceDev{name: d.name, devt: d.snap.KernelDevT}
	}
	sp, err := newSplitter(o.Dir, tdevs, ncpu)
	if err != nil {
		return nil, err
	}
	sp.noCgroup = o.NoCgroup
	sp.maxBytes = o.MaxSize
	sp.rtOffset = manifest.ClockOffsetNs()
	procs := map[uint32]manifest.Process{}
	var cmdlines map[int]string
	var cmdlinesAt time.Time
	sp.newPID = func(pid uint32) {
		if pid == 0 {
			return
		}
		if p, ok := sys.Process(int(pid), hier); ok {
			procs[pid] = p
		}
	}
	sp.comm = func(pid uint32) string {
		if pid == 0 {
			return "swapper"
		}
		if p, ok := procs[pid]; ok {
			return p.Comm
		}
		if c, ok := cmdlines[int(pid)]; ok {
			return c
		}
		if time.Since(cmdlinesAt) > time.Second {
			cmdlines, cmdlinesAt = tfs.savedCmdlines(), time.Now()
			if c, ok := cmdlines[int(pid)]; ok {
				return c
			}
		}
		return "<...>"
	}

	pipe, err := syscall.Open(filepath.Join(tfs.Dir, "trace_pipe"), syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		sp.close()
		return nil, fmt.Errorf("opening %s/trace_pipe: %w", tfs.Dir, err)
	}
	pump := newPump(pipe, sp, tfs)
	pump.nice = o.ReaderNice
	if o.Drain == "live" {
		go pump.run()
	}

	// Counters right next to the tracing window.
	for _, d := range devs {
		d.statPre, _ = sys.DiskStat(d.name)
	}
	cgPre := map[uint64]map[string]int64{}
	if herr == nil {
		for id, p := range cgIDs {
			cgPre[id] = sys.CgroupCounters(hier, p, devs[0].snap.MajorMinor)
		}
	}
	var reasons []string
	var notes []string
	start := time.Now()
	if err := tfs.Write("tracing_on", "1"); err != nil {
		pump.abort()
		sp.close()
		return nil, err
	}
	o.logf("tracing %s into %s (buffer %d KiB per CPU, drain %s)", names(devs), o.Dir, o.BufferKB, o.Drain)

	var cmd *exec.Cmd
	cmdDone := make(chan error, 1)
	if len(o.Command) > 0 {
		cmd = exec.Command(o.Command[0], o.Command[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
		if err := cmd.Start(); err != nil {
			tfs.Write("tracing_on", "0")
			pump.abort()
			sp.close()
			return nil, fmt.Errorf("starting %s: %w", o.Command[0], err)
		}
		go func() { cmdDone <- cmd.Wait() }()
	}
	var timer <-chan time.Time
	if o.Duration > 0 {
		t := time.NewTimer(o.Duration)
		defer t.Stop()
		timer = t.C
	}
	interrupted := false
	var cmdErr error
	cmdRunning := cmd != nil
	select {
	case cmdErr = <-cmdDone:
		cmdRunning = false
		rec.Stop = "command exited"
	case <-timer:
		rec.Stop = "duration"
	case sig := <-o.Signals:
		rec.Stop = sig.String()
		interrupted = true
		if cmdRunning || o.Duration > 0 {
			what := "before --duration elapsed"
			if cmdRunning {
				what = "while the command was running"
			}
			reasons = append(reasons, fmt.Sprintf("interrupted by %s after %.2f s, %s", sig, time.Since(start).Seconds(), what))
		}
	case err := <-pump.stopped:
		rec.Stop = "error"
		reasons = append(reasons, err.Error())
	}
	if err := tfs.Write("tracing_on", "0"); err != nil {
		notes = append(notes, err.Error())
	}
	rec.DurationS = time.Since(start).Seconds()
	for _, d := range devs {
		d.statPost, _ = sys.DiskStat(d.name)
	}
	// Cgroups that exist now (a command may have made some).
	var cgNow map[uint64]string
	if herr == nil {
		cgNow = sys.CgroupIDs(hier)
		for id, p := range cgNow {
			if _, ok := cgIDs[id]; !ok {
				cgIDs[id] = p
			}
		}
	}
	cgPost := map[uint64]map[string]int64{}
	if herr == nil {
		for id, p := range cgNow {
			cgPost[id] = sys.CgroupCounters(hier, p, devs[0].snap.MajorMinor)
		}
	}
	stoppedCmd := cmdRunning
	if cmdRunning {
		if interrupted {
			if sig, ok := lastSignal(rec.Stop); ok {
				cmd.Process.Signal(sig)
			}
		} else {
			cmd.Process.Signal(syscall.SIGTERM)
		}
		select {
		case cmdErr = <-cmdDone:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			cmdErr = <-cmdDone
			notes = append(notes, "the command did not end within 10 s of the stop: killed")
		}
	}
	if cmd != nil {
		rc := cmd.ProcessState.ExitCode()
		rec.CommandRC = &rc
		switch {
		case stoppedCmd:
			notes = append(notes, fmt.Sprintf("the command was still running when recording stopped (%s): signalled, exit status %d", rec.Stop, rc))
		case cmdErr != nil && rc != 0:
			notes = append(notes, fmt.Sprintf("the command exited with status %d", rc))
		}
	}

	// Drain what the ring buffer still holds.
	if o.Drain == "after" {
		go pump.run()
	}
	pump.finish()
	drainStart := time.Now()
	select {
	case <-pump.done:
	case sig := <-o.Signals:
		pump.abort()
		<-pump.done
		reasons = append(reasons, fmt.Sprintf("%s during the drain: %d ring-buffer entries not read", sig, tfs.entries()))
	}
	if pump.err != nil && !contains(reasons, pump.err.Error()) {
		reasons = append(reasons, pump.err.Error())
	}
	if d := time.Since(drainStart); d > time.Second {
		notes = append(notes, fmt.Sprintf("drained the ring buffer in %.1f s after tracing stopped", d.Seconds()))
	}
	stats := tfs.perCPUStats()
	syscall.Close(pipe)
	restore()
	// After a write error the files' last writes fail the same way: say it once.
	if err := sp.finish(); err != nil && pump.err == nil {
		reasons = append(reasons, err.Error())
	}
	if err := sp.close(); err != nil && pump.err == nil {
		reasons = append(reasons, err.Error())
	}
	if len(reasons) > 0 {
		if n, err := sp.trimTorn(); err != nil {
			notes = append(notes, "trimming torn records: "+err.Error())
		} else if n > 0 {
			notes = append(notes, fmt.Sprintf("cut %d bytes of records torn by the write error", n))
		}
	}

	// What was lost.
	var lost manifest.Lost
	for _, st := range stats {
		lost.Overrun += st["overrun"]
		lost.CommitOverrun += st["commit overrun"]
		lost.Dropped += st["dropped events"]
	}
	lost.InBandMarkers, lost.InBandEvents, lost.JunkBytes = sp.lostMarkers, sp.lostEvents, sp.junk
	// The in-band markers report the overruns the reader met: the same
	// events as the stats' overrun count, not more.
	lost.TotalLostKnown = max(lost.Overrun+lost.Dropped, lost.InBandEvents, lost.InBandMarkers)
	rec.Lost = lost
	rec.Records = sp.records
	rec.Bytes = sp.written
	rec.FirstTimeNs, rec.LastTimeNs = int64(sp.firstT), int64(sp.lastT)
	if len(sp.other) > 0 {
		rec.OtherDevices = sp.other
	}
	if sp.full {
		reasons = append(reasons, fmt.Sprintf("--max-size %d bytes reached: %d records not written", o.MaxSize, sp.notWritten))
	}
	if lost.TotalLostKnown > 0 {
		o.logf("WARNING: %d events lost (ring-buffer overrun %d, dropped %d, in-band markers %d reporting %d); a larger --buffer-size or --drain live helps",
			lost.TotalLostKnown, lost.Overrun, lost.Dropped, lost.InBandMarkers, lost.InBandEvents)
	}
	if sp.hdrMismatch > 0 {
		notes = append(notes, fmt.Sprintf("%d records whose ftrace header differs from the record's pid/cpu/time", sp.hdrMismatch))
	}

	// The manifest.
	for i, d := range devs {
		td := sp.order[i]
		dv := d.snap
		for _, f := range td.files {
			dv.Files = append(dv.Files, filepath.Base(f.path))
		}
		if d.statPre != nil && d.statPost != nil {
			delta := manifest.Delta(d.statPre, d.statPost)
			if i == 0 {
				m.DeviceStatDelta = delta
			}
		}
		m.Devices = append(m.Devices, dv)
		if td.counts.reordered > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d records earlier than the one before them in their CPU file", d.name, td.counts.reordered))
		}
	}
	m.Device = m.Devices[0]
	m.Scheduler = manifest.ActiveScheduler(m.Device.SchedulerLine)
	m.IoschedTunables = m.Device.Iosched
	first := sp.order[0]
	var checkCgs []manifest.CgroupCounters
	ids := make([]uint64, 0, len(first.counts.byCgroup))
	for id := range first.counts.byCgroup {
		if id != 0 {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		path, known := cgIDs[id]
		c, ok := cgStart[id]
		if _, now := cgNow[id]; now && herr == nil {
			c = sys.CgroupSettings(hier, path, devs[0].snap.MajorMinor)
			ok = true
		}
		if !ok {
			c = manifest.Cgroup{Path: path, Hierarchy: hier.Name()}
			if !known {
				c.Path = ""
				notes = append(notes, fmt.Sprintf("cgroup id %d: no such cgroup at the start or the end of recording", id))
			}
		}
		c.ID = id
		c.IDPrinted = fmt.Sprintf("%x,%x", id&0xffffffff, id>>32)
		c.CountersBefore, c.CountersAfter = cgPre[id], cgPost[id]
		if c.CountersBefore == nil && c.CountersAfter != nil {
			c.CountersBefore = map[string]int64{} // made during the recording
		}
		d := manifest.Delta(c.CountersBefore, c.CountersAfter)
		if v, ok := d["bfq.io_serviced.Read"]; ok {
			w := d["bfq.io_serviced.Write"]
			br, bw := d["bfq.io_service_bytes.Read"], d["bfq.io_service_bytes.Write"]
			c.KernelServicedReadDelta, c.KernelServicedWriteDelta = &v, &w
			c.KernelBytesReadDelta, c.KernelBytesWriteDelta = &br, &bw
		}
		acts := first.counts.byCgroup[id]
		c.TraceActions = map[string]int{}
		for a, n := range acts {
			c.TraceActions[a] = int(n)
			c.TraceIOEvents += int(n)
		}
		if c.Path != "" && c.CountersAfter != nil {
			checkCgs = append(checkCgs, manifest.CgroupCounters{Path: c.Path, ID: id, Before: c.CountersBefore, After: c.CountersAfter})
		}
		m.Cgroups = append(m.Cgroups, c)
	}
	if o.NoCgroup {
		notes = append(notes, "recorded without cgroup ids (--no-cgroup): no per-cgroup completeness check")
	}
	m.CgroupIDNote = "cgroup ids in the trace are kernfs ids of the " + hier.Name() + " hierarchy (" + hier.Mount + ") = inode number of the cgroup directory; root = 1"
	pids := make([]uint32, 0, len(procs))
	for pid := range procs {
		pids = append(pids, pid)
	}
	sort.Slice(pids, func(i, j int) bool { return pids[i] < pids[j] })
	for _, pid := range pids {
		p := procs[pid]
		for _, td := range sp.order {
			p.Queued += int(td.counts.queuedByPID[pid])
		}
		if p.Queued == 0 {
			continue // seen only on completions or messages: whoever was current then
		}
		m.Processes = append(m.Processes, p)
	}
	tc := manifest.TraceCounts{ByCgroup: first.counts.byCgroup, Completions: first.counts.completions,
		FlushSeqData: first.counts.flushSeqData, Lost: lost.TotalLostKnown}
	var disk map[string]int64
	if devs[0].statPre != nil && devs[0].statPost != nil {
		disk = manifest.Delta(devs[0].statPre, devs[0].statPost)
	}
	comp := manifest.Check(tc, checkCgs, disk)
	for i, c := range m.Cgroups {
		for _, e := range comp.PerCgroup {
			if e.ID == c.ID {
				m.Cgroups[i].TraceComplete = e.OK
			}
		}
	}
	for i := 1; i < len(devs); i++ {
		td := sp.order[i]
		var dd map[string]int64
		if devs[i].statPre != nil && devs[i].statPost != nil {
			dd = manifest.Delta(devs[i].statPre, devs[i].statPost)
		}
		c := manifest.Check(manifest.TraceCounts{Completions: td.counts.completions, FlushSeqData: td.counts.flushSeqData}, nil, dd)
		for _, p := range c.Problems {
			comp.Problems = append(comp.Problems, devs[i].name+": "+p)
		}
		if c.TraceComplete != nil && !*c.TraceComplete && comp.TraceComplete != nil {
			f := false
			comp.TraceComplete = &f
		}
	}
	m.Completeness = comp
	m.TraceComplete = comp.TraceComplete
	if comp.TraceComplete != nil && !*comp.TraceComplete {
		for _, p := range comp.Problems {
			o.logf("WARNING: trace incomplete: %s", p)
		}
	}
	reasons = append(reasons, incompleteFromCheck(comp)...)
	wall := rec.DurationS
	m.WallS = &wall
	rec.Notes = notes
	complete := len(reasons) == 0
	m.Complete = &complete
	m.IncompleteReasons = reasons
	final = true
	if err := writeManifest(mpath, m); err != nil {
		return m, err
	}
	o.logf("%d records (%.1f MiB) from %s in %.2f s; %s", sp.records, float64(sp.written)/(1<<20), names(devs), rec.DurationS, verdict(m))
	if !complete {
		return m, fmt.Errorf("%w: %s", ErrPartial, strings.Join(reasons, "; "))
	}
	if cmd != nil && !stoppedCmd && rec.CommandRC != nil && *rec.CommandRC != 0 {
		return m, fmt.Errorf("the command exited with status %d (the capture is complete)", *rec.CommandRC)
	}
	return m, nil
}

// writeManifest stores m atomically, else (a full disk) over the space
// reserved at the start.
func writeManifest(path string, m *manifest.Manifest) error {
	err := manifest.Write(path, m)
	if err == nil {
		return nil
	}
	if ierr := manifest.WriteInPlace(path, m); ierr != nil {
		return fmt.Errorf("%v; in place: %v", err, ierr)
	}
	return nil
}

func incompleteFromCheck(c *manifest.Completeness) []string {
	if c.TraceComplete == nil || *c.TraceComplete {
		return nil
	}
	return append([]string(nil), c.Problems...)
}

func verdict(m *manifest.Manifest) string {
	switch {
	case m.Complete != nil && !*m.Complete:
		return "PARTIAL: " + strings.Join(m.IncompleteReasons, "; ")
	case m.TraceComplete == nil:
		return "complete (no kernel counters to check it against)"
	}
	n := 0
	if m.Completeness != nil {
		n = m.Completeness.Checks
	}
	return fmt.Sprintf("complete (%d counts match the kernel's)", n)
}

func lastSignal(s string) (os.Signal, bool) {
	switch s {
	case syscall.SIGINT.String():
		return syscall.SIGINT, true
	case syscall.SIGTERM.String():
		return syscall.SIGTERM, true
	case syscall.SIGHUP.String():
		return syscall.SIGHUP, true
	}
	return nil, false
}

func names(devs []*devState) string {
	var n []string
	for _, d := range devs {
		n = append(n, d.name)
	}
	return strings.Join(n, " ")
}

func readDevTrace(name string) map[string]string {
	out := map[string]string{}
	for _, f := range []string{"enable", "act_mask", "start_lba", "end_lba", "pid"} {
		if b, err := os.ReadFile("/sys/class/block/" + name + "/trace/" + f); err == nil {
			out[f] = strings.TrimSpace(string(b))
		}
	}
	return out
}

// setup puts tracefs and the devices' traces in recording state, tracing off.
func setup(t *Tracefs, o Options, devs []*devState) error {
	cg := "1"
	if o.NoCgroup {
		cg = "0"
	}
	steps := [][2]string{
		{"tracing_on", "0"}, {"current_tracer", "nop"}, {"buffer_size_kb", strconv.Itoa(o.BufferKB)},
		{"trace_clock", "mono"}, {"current_tracer", "blk"}, {"options/blk_classic", "0"}, {"options/blk_cgname", "0"},
		{"options/blk_cgroup", cg}, {"options/context-info", "1"}, {"options/bin", "1"}, {"trace", ""},
	}
	for _, s := range steps {
		if err := t.Write(s[0], s[1]); err != nil {
			return err
		}
	}
	mask := actMaskAll
	if o.NoNotify {
		mask = strings.Replace(mask, ",notify", "", 1)
	}
	for _, d := range devs {
		dir := "/sys/class/block/" + d.name + "/trace/"
		if d.before["enable"] == "1" {
			if err := writeFile(dir+"enable", "0"); err != nil {
				return err
			}
		}
		if err := writeFile(dir+"enable", "1"); err != nil {
			return err
		}
		d.enabled = true
		// A blk_trace keeps its filters: set every one explicitly (a stale
		// end_lba once dropped every request above it).
		for _, kv := range [][2]string{{"start_lba", "0"}, {"end_lba", strconv.FormatInt(d.sectors, 10)}, {"pid", "0"}, {"act_mask", mask}} {
			if err := writeFile(dir+kv[0], kv[1]); err != nil {
				return err
			}
		}
		d.filters = readDevTrace(d.name)
		if d.filters["start_lba"] != "0" || d.filters["end_lba"] != strconv.FormatInt(d.sectors, 10) || d.filters["pid"] != "0" {
			return fmt.Errorf("%s: the trace filters did not take: start_lba=%s end_lba=%s pid=%s (want 0 %d 0)",
				d.name, d.filters["start_lba"], d.filters["end_lba"], d.filters["pid"], d.sectors)
		}
		if got := d.filters["act_mask"]; got != mask {
			return fmt.Errorf("%s: trace/act_mask reads %q after writing %q", d.name, got, mask)
		}
	}
	return nil
}

// pump reads trace_pipe into the splitter on its own goroutine.
type pump struct {
	fd        int
	sp        *splitter
	t         *Tracefs
	finishing chan struct{}
	aborting  chan struct{}
	done      chan struct{}
	stopped   chan error // one error that should stop the recording (write error, max size)
	err       error
	nice      int
}

func newPump(fd int, sp *splitter, t *Tracefs) *pump {
	return &pump{fd: fd, sp: sp, t: t, finishing: make(chan struct{}), aborting: make(chan struct{}),
		done: make(chan struct{}), stopped: make(chan error, 1)}
}

// finish asks the pump to end once the ring buffer is empty.
func (p *pump) finish() {
	select {
	case <-p.finishing:
	default:
		close(p.finishing)
	}
}

// abort asks the pump to end now.
func (p *pump) abort() {
	select {
	case <-p.aborting:
	default:
		close(p.aborting)
	}
	p.finish()
}

// stop reports err to the recording without blocking.
func (p *pump) stop(err error) {
	select {
	case p.stopped <- err:
	default:
	}
}

func (p *pump) run() {
	defer close(p.done)
	if p.nice != 0 {
		// per-thread nice (Linux): only this reader yields to the workload
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), p.nice)
	}
	buf := make([]byte, 1<<20)
	idle := 0
	signalled := false
	deadline := time.Time{}
	for {
		select {
		case <-p.aborting:
			return
		default:
		}
		n, err := syscall.Read(p.fd, buf)
		if n > 0 {
			idle = 0
			if _, werr := p.sp.Write(buf[:n]); werr != nil && p.err == nil {
				p.err = fmt.Errorf("writing the trace: %w", werr)
				p.stop(p.err)
				return
			}
			if p.sp.full && !signalled {
				signalled = true
				p.stop(fmt.Errorf("--max-size %d bytes reached", p.sp.maxBytes))
			}
			continue
		}
		if err != nil && err != syscall.EAGAIN && err != syscall.EINTR {
			p.err = fmt.Errorf("reading trace_pipe: %w", err)
			p.stop(p.err)
			return
		}
		select {
		case <-p.finishing:
			if deadline.IsZero() {
				deadline = time.Now().Add(2 * time.Minute)
			}
			if p.t.entries() == 0 {
				idle++
				if idle >= 3 {
					if err := p.sp.flush(); err != nil {
						p.err = err
					}
					return
				}
			}
			if time.Now().After(deadline) {
				p.err = fmt.Errorf("the ring buffer still held %d entries 2 minutes after tracing stopped", p.t.entries())
				return
			}
			time.Sleep(5 * time.Millisecond)
		case <-p.aborting:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}
