package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Tracefs is the kernel's tracing file system (/sys/kernel/tracing).
type Tracefs struct {
	Dir string
	// Mounted is true when Open mounted it (Close unmounts it again).
	Mounted bool
}

// tracefsDirs are where tracefs is found, in order.
var tracefsDirs = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// OpenTracefs finds tracefs, mounting it on /sys/kernel/tracing when no
// mount is there, and checks that the kernel has the blk tracer.
func OpenTracefs() (*Tracefs, error) {
	t := &Tracefs{}
	for _, d := range tracefsDirs {
		if _, err := os.Stat(filepath.Join(d, "current_tracer")); err == nil {
			t.Dir = d
			break
		}
	}
	if t.Dir == "" {
		d := tracefsDirs[0]
		if err := syscall.Mount("nodev", d, "tracefs", 0, ""); err != nil {
			return nil, fmt.Errorf("tracefs is not mounted at %s and cannot be mounted: %w (are you root? does the kernel have CONFIG_FTRACE?)", d, err)
		}
		t.Dir, t.Mounted = d, true
	}
	avail, err := t.Read("available_tracers")
	if err != nil {
		t.Close()
		return nil, err
	}
	if !contains(strings.Fields(avail), "blk") {
		t.Close()
		return nil, fmt.Errorf("%s/available_tracers has no blk tracer (the kernel lacks CONFIG_BLK_DEV_IO_TRACE)", t.Dir)
	}
	return t, nil
}

// Close unmounts tracefs when OpenTracefs mounted it.
func (t *Tracefs) Close() error {
	if !t.Mounted {
		return nil
	}
	t.Mounted = false
	if err := syscall.Unmount(t.Dir, 0); err != nil {
		return fmt.Errorf("unmounting %s: %w", t.Dir, err)
	}
	return nil
}

func (t *Tracefs) path(name string) string { return filepath.Join(t.Dir, name) }

// Read returns a tracefs file's text, trimmed.
func (t *Tracefs) Read(name string) (string, error) {
	b, err := os.ReadFile(t.path(name))
	return strings.TrimSpace(string(b)), err
}

// Write writes value to a tracefs file (one write, as echo does).
func (t *Tracefs) Write(name, value string) error {
	return writeFile(t.path(name), value)
}

func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %q to %s: %w", value, path, err)
	}
	return nil
}

// bracketed returns the [selected] word of a tracefs choice file.
func bracketed(s string) string {
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return s
}

// bufferKB reads buffer_size_kb: "1408" or "7 (expanded: 1408)".
func bufferKB(s string) (int, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, errors.New("empty buffer_size_kb")
	}
	if len(f) >= 3 && f[1] == "(expanded:" {
		return strconv.Atoi(strings.TrimSuffix(f[2], ")"))
	}
	return strconv.Atoi(f[0])
}

// tracefsState is what a recording changes in tracefs, as found.
type tracefsState struct {
	tracingOn string
	tracer    string
	clock     string
	bufferKB  int
	expanded  bool // buffer_size_kb said "(expanded: N)": never resized yet
	options   map[string]string
}

// recordOptions are the trace_options a recording sets.
var recordOptions = []string{"bin", "context-info", "blk_cgroup", "blk_classic", "blk_cgname"}

// busy reports why ftrace is in use by someone else, or "".
func (t *Tracefs) busy() string {
	if cur, err := t.Read("current_tracer"); err == nil && cur != "nop" {
		return fmt.Sprintf("current_tracer is %q (another tracer, or a recorder killed without cleaning up)", cur)
	}
	if ev, err := t.Read("set_event"); err == nil && ev != "" {
		n := len(strings.Fields(ev))
		return fmt.Sprintf("%d trace events are enabled in %s/set_event", n, t.Dir)
	}
	if f, err := t.Read("set_ftrace_filter"); err == nil && f != "" && !strings.HasPrefix(f, "#") {
		return fmt.Sprintf("%s/set_ftrace_filter is set", t.Dir)
	}
	return ""
}

func (t *Tracefs) save() (*tracefsState, error) {
	s := &tracefsState{options: map[string]string{}}
	var err error
	if s.tracingOn, err = t.Read("tracing_on"); err != nil {
		return nil, err
	}
	if s.tracer, err = t.Read("current_tracer"); err != nil {
		return nil, err
	}
	c, err := t.Read("trace_clock")
	if err != nil {
		return nil, err
	}
	s.clock = bracketed(c)
	b, err := t.Read("buffer_size_kb")
	if err != nil {
		return nil, err
	}
	s.expanded = strings.Contains(b, "expanded")
	if s.bufferKB, err = bufferKB(b); err != nil {
		return nil, fmt.Errorf("%s/buffer_size_kb: %q: %w", t.Dir, b, err)
	}
	for _, o := range recordOptions {
		v, err := t.Read("options/" + o)
		if err != nil {
			return nil, fmt.Errorf("%s/options/%s: %w (the kernel's blk tracer lacks this option)", t.Dir, o, err)
		}
		s.options[o] = v
	}
	return s, nil
}

// restore puts s back, every step tried; it returns the steps that failed.
func (t *Tracefs) restore(s *tracefsState) []string {
	var errs []string
	try := func(name, v string) {
		if err := t.Write(name, v); err != nil {
			errs = append(errs, err.Error())
		}
	}
	try("tracing_on", "0")
	for _, o := range recordOptions {
		try("options/"+o, s.options[o])
	}
	try("current_tracer", s.tracer)
	try("trace_clock", s.clock)
	if cur, err := t.Read("buffer_size_kb"); err != nil || !strings.HasPrefix(cur, strconv.Itoa(s.bufferKB)) {
		try("buffer_size_kb", strconv.Itoa(s.bufferKB))
	}
	try("tracing_on", s.tracingOn)
	return errs
}

// perCPUStats reads per_cpu/cpuN/stats: field -> value per CPU.
func (t *Tracefs) perCPUStats() map[int]map[string]int64 {
	out := map[int]map[string]int64{}
	dirs, _ := filepath.Glob(t.path("per_cpu/cpu[0-9]*"))
	for _, d := range dirs {
		cpu, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "cpu"))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "stats"))
		if err != nil {
			continue
		}
		m := map[string]int64{}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				m[strings.TrimSpace(k)] = n
			}
		}
		out[cpu] = m
	}
	return out
}

// entries sums per-CPU entries still in the ring buffer.
func (t *Tracefs) entries() int64 {
	var n int64
	for _, m := range t.perCPUStats() {
		n += m["entries"]
	}
	return n
}

// savedCmdlines reads saved_cmdlines: pid -> comm.
func (t *Tracefs) savedCmdlines() map[int]string {
	out := map[int]string{}
	b, err := os.ReadFile(t.path("saved_cmdlines"))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		p, c, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if pid, err := strconv.Atoi(p); err == nil {
			out[pid] = c
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// lockFile is the lock the team's capture scripts take around tracefs
// (../shared/rig/capture.sh): one recorder at a time on a machine.
const lockFile = "/tmp/rig/.trace.lock"

// lock takes lockFile, waiting at most wait (polling) unless a signal
// comes first.
func lock(wait time.Duration, sigs <-chan os.Signal, logf func(string, ...any)) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(lockFile), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		return f, nil
	}
	busy := fmt.Errorf("another recorder holds %s (a capture script or tracesched record is running; --wait waits for it)", lockFile)
	if wait <= 0 {
		f.Close()
		return nil, busy
	}
	logf("waiting for %s (another recorder is running)", lockFile)
	// A blocking flock is woken as soon as the holder lets go (polling
	// loses the race to the rig's own blocking waiters). On timeout or a
	// signal the process gives up; the goroutine ends with it.
	got := make(chan error, 1)
	go func() { got <- syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	case sig := <-sigs:
		return nil, fmt.Errorf("%s while waiting for %s: nothing recorded", sig, lockFile)
	case <-time.After(wait):
		return nil, busy
	}
}
