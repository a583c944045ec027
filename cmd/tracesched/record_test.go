package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/tracesched/tracesched/manifest"
	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/trace"
)

// The tests here record real traces: they need root, tracefs, loop
// devices, BFQ, cgroup v1 blkio and (for the workload) fio, and skip
// cleanly without them. They create and remove their own loop device and
// cgroups; tracefs is global, so each checks it is left as it was found.

// A re-executed test binary with this variable set runs the command line
// instead of the tests (the signal tests need a process to signal).
const mainEnv = "TRACESCHED_TEST_MAIN"

func init() {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(int(runMain()))
	}
}

// rig is a private loop device with BFQ and two weighted v1 blkio cgroups.
type rig struct {
	dev     string // /dev/loopN
	name    string // loopN
	cgroups map[string]int
	cgDir   string
}

const blkioRoot = "/sys/fs/cgroup/blkio"

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := os.Stat("/sys/kernel/tracing/current_tracer"); err != nil {
		if _, err := os.Stat("/sys/kernel/tracing"); err != nil {
			t.Skip("no tracefs mount point")
		}
	}
	if _, err := exec.LookPath("losetup"); err != nil {
		t.Skip("no losetup")
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skip("no loop devices")
	}
}

func needFio(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("no fio (apt-get install fio)")
	}
}

func newRig(t *testing.T, weights map[string]int) *rig {
	t.Helper()
	needRoot(t)
	img := filepath.Join(t.TempDir(), "disk.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	zero := make([]byte, 1<<20)
	for i := 0; i < 64; i++ { // 64 MiB of written zeros: direct reads reach the backing file
		if _, err := f.Write(zero); err != nil {
			f.Close()
			t.Fatal(err)
		}
	}
	f.Close()
	out, err := exec.Command("losetup", "--direct-io=on", "-f", "--show", img).CombinedOutput()
	if err != nil {
		t.Skipf("losetup: %v: %s", err, out)
	}
	r := &rig{dev: strings.TrimSpace(string(out)), cgroups: map[string]int{}, cgDir: blkioRoot}
	r.name = filepath.Base(r.dev)
	t.Cleanup(func() {
		writeSys(r.queue("scheduler"), "none")
		exec.Command("losetup", "-d", r.dev).Run()
	})
	if err := writeSys(r.queue("scheduler"), "bfq"); err != nil {
		t.Skipf("no BFQ on this kernel: %v", err)
	}
	if len(weights) > 0 {
		if _, err := os.Stat(filepath.Join(blkioRoot, "blkio.bfq.io_serviced")); err != nil {
			t.Skip("no cgroup v1 blkio hierarchy with BFQ files at " + blkioRoot)
		}
	}
	for cg, w := range weights {
		name := fmt.Sprintf("tsrec-%d-%s", os.Getpid(), cg)
		d := filepath.Join(blkioRoot, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rmCgroup(d) })
		if err := writeSys(filepath.Join(d, "blkio.bfq.weight"), strconv.Itoa(w)); err != nil {
			t.Skipf("cannot set a BFQ weight: %v", err)
		}
		r.cgroups[name] = w
	}
	return r
}

// rmCgroup removes a cgroup once its processes are gone.
func rmCgroup(d string) {
	for i := 0; i < 50; i++ {
		if err := os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (r *rig) queue(attr string) string { return "/sys/block/" + r.name + "/queue/" + attr }

func writeSys(path, v string) error {
	return os.WriteFile(path, []byte(v+"\n"), 0o644)
}

// tracefsState reads the global settings a recording changes.
func tracefsState(t *testing.T) map[string]string {
	t.Helper()
	st := map[string]string{}
	for _, f := range []string{"current_tracer", "tracing_on", "trace_clock", "buffer_size_kb", "options/bin",
		"options/context-info", "options/blk_cgroup", "options/blk_classic", "options/blk_cgname"} {
		b, err := os.ReadFile("/sys/kernel/tracing/" + f)
		if err != nil {
			t.Fatalf("tracefs: %v", err)
		}
		st[f] = strings.TrimSpace(string(b))
	}
	return st
}

// tracefsMounted mounts tracefs for the test when nothing else has, so the
// state before a recording can be read.
func tracefsMounted(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/sys/kernel/tracing/current_tracer"); err == nil {
		return
	}
	if err := syscall.Mount("nodev", "/sys/kernel/tracing", "tracefs", 0, ""); err != nil {
		t.Skipf("cannot mount tracefs: %v", err)
	}
}

// checkRestored checks that tracefs reads as the recorder found it (the
// manifest's tracefs_before), holding the recorders' lock so that no other
// capture on the machine changes it meanwhile.
func checkRestored(t *testing.T, m *manifest.Manifest, r *rig) {
	t.Helper()
	unlock := lockTracefs(t)
	defer unlock()
	after := tracefsState(t)
	if m.Recording == nil || len(m.Recording.TracefsBefore) == 0 {
		t.Fatal("the manifest does not record the tracefs settings found")
	}
	for k, v := range m.Recording.TracefsBefore {
		got := after[k]
		if k == "trace_clock" {
			got = bracket(got)
		}
		if k == "buffer_size_kb" && strings.Contains(got, "expanded: ") {
			got = strings.TrimSuffix(strings.SplitN(got, "expanded: ", 2)[1], ")")
		}
		if k == "buffer_size_kb" && sameBufferKB(v, got) {
			continue
		}
		if got != v {
			t.Errorf("tracefs %s: %q before, %q after the recording", k, v, got)
		}
	}
	if after["current_tracer"] != "nop" || after["options/bin"] != "0" {
		t.Errorf("tracefs after the recording: current_tracer %q, bin %q", after["current_tracer"], after["options/bin"])
	}
	b, _ := os.ReadFile("/sys/block/" + r.name + "/trace/enable")
	if strings.TrimSpace(string(b)) != "0" {
		t.Errorf("/sys/block/%s/trace/enable is %q after the recording", r.name, strings.TrimSpace(string(b)))
	}
}

// sameBufferKB reports whether buffer_size_kb values a (written back) and
// b (read after) are one size: the kernel rounds a size written up to
// whole ring-buffer pages of PAGE_SIZE less their header
// (ring_buffer_resize: DIV_ROUND_UP(size, BUF_PAGE_SIZE)), so writing back
// the unexpanded default 1408 reads 1410 (354 pages of 4080 bytes).
func sameBufferKB(a, b string) bool {
	x, err1 := strconv.Atoi(a)
	y, err2 := strconv.Atoi(b)
	return err1 == nil && err2 == nil && y >= x && y-x < 4
}

func bracket(s string) string {
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return s
}

// lockTracefs takes the recorders' lock (/tmp/rig/.trace.lock), waiting at
// most 5 minutes (the test skips otherwise).
func lockTracefs(t *testing.T) func() {
	t.Helper()
	f, err := os.OpenFile("/tmp/rig/.trace.lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Minute):
		t.Skip("another recorder held the tracefs lock for 5 minutes")
	}
	return func() { f.Close() }
}

// countD counts the D events per cgroup id in the capture's files, read
// back through parse/blktrace.
func countD(t *testing.T, input string) map[uint64]int64 {
	t.Helper()
	in, err := blktrace.Open(input)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out := map[uint64]int64{}
	for {
		ev, err := in.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Action == trace.ActionIssue {
			out[ev.Cgroup]++
		}
	}
	return out
}

// fioIOs returns each job's cgroup -> read+write total_ios from fio's JSON.
func fioIOs(t *testing.T, path string) map[string]int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.IndexByte(string(b), '{'); i > 0 {
		b = b[i:]
	}
	var j struct {
		Jobs []struct {
			Options map[string]string `json:"job options"`
			Read    struct {
				TotalIOs int64 `json:"total_ios"`
			} `json:"read"`
			Write struct {
				TotalIOs int64 `json:"total_ios"`
			} `json:"write"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string]int64{}
	for _, jb := range j.Jobs {
		out["/"+jb.Options["cgroup"]] += jb.Read.TotalIOs + jb.Write.TotalIOs
	}
	return out
}

func writeJob(t *testing.T, r *rig, runtime string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "[global]\nfilename=%s\ndirect=1\nioengine=libaio\niodepth=8\nbs=4k\nrw=randread\ntime_based=1\nruntime=%s\ncgroup_nodelete=1\n", r.dev, runtime)
	for cg := range r.cgroups {
		fmt.Fprintf(&b, "[%s]\ncgroup=%s\n", cg, cg)
	}
	p := filepath.Join(t.TempDir(), "job.fio")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// End to end: record a fio workload in two cgroups weighted 100 and 900,
// check the trace's requests per cgroup against the kernel's counters
// (blkio.bfq.io_serviced) and fio's, then replay the capture with no
// flags: scheduler and weights come from the manifest.
func TestRecordFioTwoCgroupsReplay(t *testing.T) {
	needRoot(t)
	needFio(t)
	tracefsMounted(t)
	r := newRig(t, map[string]int{"light": 100, "heavy": 900})
	dir := filepath.Join(t.TempDir(), "cap")
	job := writeJob(t, r, "1s")
	fioJSON := filepath.Join(t.TempDir(), "fio.json")
	_, errOut, code := run(t, "record", "--wait", "4m", r.dev, "-o", dir, "--", "fio", "--output-format=json", "--output="+fioJSON, job)
	if code != exitOK && strings.Contains(errOut, "another recorder holds") {
		t.Skip("another recorder held the tracefs lock for 4 minutes")
	}
	m, err := manifest.Load(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatalf("%v; record exit %d: %s", err, code, errOut)
	}
	checkRestored(t, m, r)
	if code != exitOK {
		t.Fatalf("record: exit %d: %s", code, errOut)
	}
	if m.Complete == nil || !*m.Complete {
		t.Fatalf("capture not complete: %v", m.IncompleteReasons)
	}
	if m.Scheduler != "bfq" || m.Device.Name != r.name || m.Host.KernelRelease == "" {
		t.Errorf("manifest: scheduler %q device %q kernel %q", m.Scheduler, m.Device.Name, m.Host.KernelRelease)
	}
	if f := m.Recording.DeviceFilters[r.name]; f["start_lba"] != "0" || f["end_lba"] != strconv.FormatInt(m.Device.SizeBytes/512, 10) || f["pid"] != "0" {
		t.Errorf("device filters read back as %v, want start_lba 0, end_lba %d, pid 0", f, m.Device.SizeBytes/512)
	}
	traceD := countD(t, filepath.Join(dir, r.name))
	fio := fioIOs(t, fioJSON)
	ids := map[string]uint64{}
	for _, cg := range m.Cgroups {
		w, ours := r.cgroups[strings.TrimPrefix(cg.Path, "/")]
		if !ours {
			continue
		}
		ids[cg.Path] = cg.ID
		if cg.BFQWeight == nil || *cg.BFQWeight != w {
			t.Errorf("%s: manifest weight %v, set %d", cg.Path, cg.BFQWeight, w)
		}
		if cg.KernelServicedReadDelta == nil {
			t.Fatalf("%s: no kernel io_serviced delta in the manifest", cg.Path)
		}
		kernel := *cg.KernelServicedReadDelta + *cg.KernelServicedWriteDelta
		// Random 4k reads do not merge: every request the kernel counted is
		// one D in the trace (the rig's rule allows 0.5 % or 3 at the edges).
		if d := traceD[cg.ID] - kernel; d > 3 || d < -3 {
			t.Errorf("%s (id %d): trace has %d D events, the kernel counted %d requests", cg.Path, cg.ID, traceD[cg.ID], kernel)
		}
		if d := traceD[cg.ID] - fio[cg.Path]; d > 3 || d < -3 {
			t.Errorf("%s: trace has %d D events, fio reports %d I/Os", cg.Path, traceD[cg.ID], fio[cg.Path])
		}
		t.Logf("%s id %d weight %d: trace D %d, kernel io_serviced %d, fio %d", cg.Path, cg.ID, w, traceD[cg.ID], kernel, fio[cg.Path])
	}
	if len(ids) != 2 {
		t.Fatalf("manifest names %d of the 2 cgroups: %+v", len(ids), m.Cgroups)
	}

	out, errOut, code := run(t, "replay", "--json", dir)
	if code != exitOK {
		t.Fatalf("replay with no flags: exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "scheduler bfq (manifest)") {
		t.Errorf("replay's stderr does not say the scheduler came from the manifest:\n%s", errOut)
	}
	var res struct {
		Cgroups []struct {
			ID     uint64  `json:"id"`
			Weight int     `json:"weight"`
			Real   float64 `json:"real_share"`
			Pred   float64 `json:"predicted_share"`
		} `json:"cgroups"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	heavy := ids["/"+fmt.Sprintf("tsrec-%d-heavy", os.Getpid())]
	light := ids["/"+fmt.Sprintf("tsrec-%d-light", os.Getpid())]
	got := map[uint64]int{}
	for _, c := range res.Cgroups {
		got[c.ID] = c.Weight
		if c.ID == heavy {
			t.Logf("weight-900 cgroup: real share %.3f, predicted %.3f", c.Real, c.Pred)
		}
	}
	if got[heavy] != 900 || got[light] != 100 {
		t.Errorf("replay used weights %v; want %d=900 %d=100 from the manifest", got, heavy, light)
	}
	for _, want := range []string{fmt.Sprintf("weight %d=900", heavy), fmt.Sprintf("weight %d=100", light)} {
		if !strings.Contains(errOut, want) {
			t.Errorf("replay's stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// Ctrl-C (SIGINT) and SIGTERM during a recording leave tracefs as it was
// and a capture directory marked partial, with files that read.
func TestRecordInterrupted(t *testing.T) {
	needRoot(t)
	needFio(t)
	tracefsMounted(t)
	r := newRig(t, map[string]int{"a": 100})
	lockBusy := false
	for _, tc := range []struct {
		sig   syscall.Signal
		after time.Duration
	}{{syscall.SIGINT, 1500 * time.Millisecond}, {syscall.SIGTERM, 1500 * time.Millisecond}, {syscall.SIGTERM, 30 * time.Millisecond}} {
		t.Run(fmt.Sprintf("%s-after-%s", tc.sig, tc.after), func(t *testing.T) {
			if lockBusy {
				t.Skip("the tracefs lock is busy")
			}
			dir := filepath.Join(t.TempDir(), "cap")
			job := writeJob(t, r, "20s")
			cmd := exec.Command(os.Args[0], "record", "--wait", "4m", r.dev, "-o", dir, "--", "fio", "--output=/dev/null", job)
			cmd.Env = append(os.Environ(), mainEnv+"=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if !waitManifest(t, dir) {
				cmd.Process.Kill()
				cmd.Wait()
				lockBusy = true
				t.Skip("another recorder held the tracefs lock for 4 minutes")
			}
			time.Sleep(tc.after)
			cmd.Process.Signal(tc.sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("record did not end within 60 s of %s", tc.sig)
			}
			rc := cmd.ProcessState.ExitCode()
			mp := filepath.Join(dir, "manifest.json")
			m, err := manifest.Load(mp)
			if err != nil {
				t.Fatal(err)
			}
			checkRestored(t, m, r)
			if m.Complete == nil || *m.Complete {
				t.Fatalf("capture interrupted by %s is not marked partial (exit %d): %s", tc.sig, rc, stderr.String())
			}
			if rc != 1 {
				t.Errorf("exit %d, want 1 for a partial capture", rc)
			}
			joined := strings.Join(m.IncompleteReasons, "; ")
			if !strings.Contains(joined, "interrupted by "+tc.sig.String()) {
				t.Errorf("reasons %q do not name the signal", joined)
			}
			if !m.Recording.Restored {
				t.Errorf("manifest says tracefs was not restored: %v", m.Recording.RestoreErrors)
			}
			out, errOut, code := run(t, "stats", dir)
			if code != exitOK || !strings.Contains(out, "INCOMPLETE: interrupted by "+tc.sig.String()) || !strings.Contains(errOut, "WARNING") {
				t.Errorf("stats on the partial capture: exit %d, stderr %q, output lacks the INCOMPLETE line:\n%s", code, errOut, out)
			}
			t.Logf("%s after %s: %s", tc.sig, tc.after, joined)
		})
	}
}

// Ctrl-C as the way to end a recording without COMMAND or --duration: the
// capture is complete.
func TestRecordCtrlCStops(t *testing.T) {
	needRoot(t)
	tracefsMounted(t)
	r := newRig(t, nil)
	dir := filepath.Join(t.TempDir(), "cap")
	cmd := exec.Command(os.Args[0], "record", "--wait", "4m", r.name, "-o", dir)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !waitManifest(t, dir) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Skip("another recorder held the tracefs lock for 4 minutes")
	}
	time.Sleep(700 * time.Millisecond)
	// 100 direct 4k reads while it records
	f, err := os.OpenFile(r.dev, os.O_RDONLY|syscall.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8192)
	al := buf[4096-int(uintptr(unsafe.Pointer(&buf[0]))&4095):][:4096]
	for i := 0; i < 100; i++ {
		if _, err := f.ReadAt(al, int64(i)*512<<10); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("record ended by Ctrl-C: %v: %s", err, stderr.String())
	}
	m, err := manifest.Load(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkRestored(t, m, r)
	if m.Complete == nil || !*m.Complete || m.Completeness.Device == nil {
		t.Fatalf("capture ended by Ctrl-C: complete %v, reasons %v", m.Complete, m.IncompleteReasons)
	}
	if d := m.Completeness.Device; d.KernelIOs < 100 || d.TraceRequests != d.KernelIOs {
		t.Errorf("device: trace %d completions, kernel %d (want both >= 100 and equal)", d.TraceRequests, d.KernelIOs)
	}
}

// waitManifest waits until a recording has begun (its manifest, marked
// "in progress", exists): another recorder on the machine may hold the lock.
func waitManifest(t *testing.T, dir string) bool {
	t.Helper()
	for i := 0; i < 2450; i++ {
		if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err == nil {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// A --no-cgroup capture is read by the distribution's blkparse (Debian's
// 1.2.0 has no cgroup support): no errors, and its completed reads are the
// kernel's read_ios.
func TestRecordNoCgroupBlkparse(t *testing.T) {
	needRoot(t)
	needFio(t)
	bp, err := exec.LookPath("blkparse")
	if err != nil {
		t.Skip("no blkparse (apt-get install blktrace)")
	}
	tracefsMounted(t)
	r := newRig(t, map[string]int{"a": 300})
	dir := filepath.Join(t.TempDir(), "cap")
	_, errOut, code := run(t, "record", "--wait", "4m", "--no-cgroup", r.dev, "-o", dir, "--", "fio", "--output=/dev/null", writeJob(t, r, "500ms"))
	if code != exitOK && strings.Contains(errOut, "another recorder holds") {
		t.Skip("another recorder held the tracefs lock for 4 minutes")
	}
	if code != exitOK {
		t.Fatalf("record --no-cgroup: exit %d: %s", code, errOut)
	}
	m, err := manifest.Load(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bp, "-i", r.name)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("blkparse: %v: %s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("blkparse complains: %s", firstLines(stderr.String(), 5))
	}
	var completed int64 = -1
	for _, l := range strings.Split(string(out), "\n") {
		if i := strings.Index(l, "Reads Completed:"); i >= 0 && strings.HasPrefix(strings.TrimSpace(l), "Reads Completed:") {
			f := strings.Fields(strings.TrimSuffix(strings.Fields(l[i+len("Reads Completed:"):])[0], ","))
			completed, _ = strconv.ParseInt(strings.TrimSuffix(f[0], ","), 10, 64)
		}
	}
	kernel := m.DeviceStatDelta["read_ios"]
	if completed != kernel || kernel == 0 {
		t.Errorf("blkparse: %d reads completed; the kernel's read_ios delta is %d", completed, kernel)
	}
	t.Logf("blkparse %s: %d reads completed, kernel read_ios %d", bp, completed, kernel)
}

func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}

// A full disk mid-recording: the capture stops, tracefs is restored and the
// manifest (written where there is room again) marks it partial.
func TestRecordFullDisk(t *testing.T) {
	needRoot(t)
	needFio(t)
	tracefsMounted(t)
	r := newRig(t, map[string]int{"a": 100})
	mnt := t.TempDir()
	// 1 MiB of room: a second of saturating random reads with BFQ messages
	// writes tens of MiB.
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a small tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	dir := filepath.Join(mnt, "cap")
	_, errOut, code := run(t, "record", "--wait", "4m", r.dev, "-o", dir, "--", "fio", "--output=/dev/null", writeJob(t, r, "3s"))
	if code != exitOK && strings.Contains(errOut, "another recorder holds") {
		t.Skip("another recorder held the tracefs lock for 4 minutes")
	}
	if code != exitError {
		t.Fatalf("record on a full disk: exit %d, want 1: %s", code, errOut)
	}
	m, err := manifest.Load(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatalf("no readable manifest after a full disk: %v (stderr %s)", err, errOut)
	}
	checkRestored(t, m, r)
	if m.Complete == nil || *m.Complete || !strings.Contains(strings.Join(m.IncompleteReasons, " "), "no space left on device") {
		t.Errorf("manifest: complete %v, reasons %v; want partial with the write error", m.Complete, m.IncompleteReasons)
	}
	if m.Recording.Stop != "error" || m.Recording.DurationS > 2.5 {
		t.Errorf("stop %q after %.2f s; want an early stop on the error", m.Recording.Stop, m.Recording.DurationS)
	}
	// What was written reads: torn records at the ends were cut.
	if _, errOut, code := run(t, "stats", dir); code != exitOK {
		t.Errorf("stats on the full-disk capture: exit %d: %s", code, errOut)
	}
	t.Logf("full disk: stopped after %.2f s: %v; %v", m.Recording.DurationS, m.IncompleteReasons, m.Recording.Notes)
}
