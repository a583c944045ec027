package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// leftovers lists the hidden temporary files in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var tmp []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			tmp = append(tmp, e.Name())
		}
	}
	return tmp
}

// Issue 14, reproducer 1: as root, `convert ... -o /dev/full` exited 0 and
// replaced /dev/full with a regular file. Special files are written in
// place: /dev/full fails with ENOSPC and stays a device, /dev/null takes
// the output and stays a device.
func TestOutputDevicesWrittenInPlace(t *testing.T) {
	in := fixture(t, "fx-mqdl-rw-nocg")
	for _, dev := range []string{"/dev/null", "/dev/full"} {
		fi, err := os.Stat(dev)
		if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Skipf("%s is not a character device here", dev)
		}
	}
	if _, errOut, code := run(t, "convert", in, "-o", "/dev/null"); code != exitOK {
		t.Fatalf("convert -o /dev/null: exit %d: %s", code, errOut)
	}
	_, errOut, code := run(t, "convert", in, "-o", "/dev/full")
	if code != exitError || !strings.Contains(errOut, "/dev/full") || !strings.Contains(errOut, "no space") {
		t.Errorf("convert -o /dev/full: exit %d, stderr %q; want exit 1 naming /dev/full and ENOSPC", code, errOut)
	}
	for _, dev := range []string{"/dev/null", "/dev/full"} {
		fi, err := os.Lstat(dev)
		if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%s is no longer a character device: %v %v", dev, fi.Mode(), err)
		}
	}
}

// A FIFO is written in place (a reader gets the bytes) and stays a FIFO.
func TestOutputFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "calib.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	_, errOut, code := run(t, "calibrate", fixture(t, "fx-mqdl-rw-nocg"), "-o", fifo)
	if code != exitOK {
		t.Fatalf("calibrate -o FIFO: exit %d: %s", code, errOut)
	}
	b := <-got
	if !bytes.Contains(b, []byte(`"kind"`)) {
		t.Errorf("FIFO reader got %d bytes, no device model: %.200q", len(b), b)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("FIFO replaced: %v %v", fi.Mode(), err)
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// `-o -` is standard output; a symbolic link to a regular file keeps the
// link and replaces the file it names atomically.
func TestOutputStdoutAndSymlink(t *testing.T) {
	in := fixture(t, "fx-mqdl-rw-nocg")
	out, errOut, code := run(t, "calibrate", in, "-o", "-")
	if code != exitOK || !strings.Contains(out, `"kind"`) {
		t.Fatalf("calibrate -o -: exit %d, stdout %.100q, stderr %s", code, out, errOut)
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "model.json")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("model.json", link); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, "calibrate", in, "-o", link); code != exitOK {
		t.Fatalf("calibrate -o link: exit %d: %s", code, errOut)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link replaced by a file: %v %v", fi.Mode(), err)
	}
	b, err := os.ReadFile(target)
	if err != nil || !bytes.Contains(b, []byte(`"kind"`)) {
		t.Fatalf("link target not written: %.80q %v", b, err)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced file's mode %v, want its own 0600", fi.Mode().Perm())
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// failWriter fails every write as a full disk does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// Issue 14, reproducer 8: `stats --json > /dev/full` exited 0.
func TestStdoutWriteErrorFails(t *testing.T) {
	ios, _, errOut := testStreams()
	ios.Out = failWriter{}
	code := Main([]string{"stats", "--json", fixture(t, "fx-mqdl-rw-nocg")}, ios)
	if code != exitError || !strings.Contains(errOut.String(), "writing standard output") {
		t.Errorf("exit %d, stderr %q; want 1 and a write error", code, errOut)
	}
}

// Issue 14, reproducer 9: `replay --sched none - < dump` failed because the
// input was opened twice; standard input is now spooled once.
func TestReplayFromStdin(t *testing.T) {
	path := filepath.Join(filepath.Dir(fixture(t, "fx-ftrace-bin")), "fx-ftrace-bin.pipe.bin.zst")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ios, out, errOut := testStreams()
	ios.In = bytes.NewReader(b)
	code := Main([]string{"replay", "--sched", "none", "--json", "-"}, ios)
	if code != exitOK {
		t.Fatalf("replay -: exit %d: %s", code, errOut)
	}
	viaFile, _, code := run(t, "replay", "--sched", "none", "--json", path)
	if code != exitOK {
		t.Fatal("replay of the file failed")
	}
	if out.String() != strings.ReplaceAll(viaFile, path, "-") {
		t.Errorf("replay of standard input differs from replay of the file")
	}
	if l, _ := os.ReadDir(tmp); len(l) > 0 {
		t.Errorf("spool left in TMPDIR: %v", l)
	}
	if _, errOut, code := run(t, "convert", "-", "-", "-o", filepath.Join(tmp, "x.arrow")); code != exitUsage {
		t.Errorf("convert - -: exit %d (%s), want a usage error", code, errOut)
	}
}

// cancelAfter is a reader that cancels a context once it has been read
// from: the run is interrupted mid-input.
type cancelAfter struct {
	r      io.Reader
	cancel context.CancelCauseFunc
	reads  int
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	c.reads++
	if c.reads == 2 {
		c.cancel(&signalError{syscall.SIGINT})
	}
	if len(p) > 4096 {
		p = p[:4096]
	}
	return c.r.Read(p)
}

// Issue 14, reproducer 5: an interrupted run leaves no temporary file and
// exits 130.
func TestInterruptCleansUp(t *testing.T) {
	path := filepath.Join(filepath.Dir(fixture(t, "fx-ftrace-bin")), "fx-ftrace-bin.pipe.bin.zst")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	outDir := t.TempDir()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ios, _, errOut := testStreams()
	ios.In = &cancelAfter{r: bytes.NewReader(b), cancel: cancel}
	code := MainContext(ctx, []string{"convert", "-", "-o", filepath.Join(outDir, "r.arrow")}, ios)
	if code != 130 || !strings.Contains(errOut.String(), "interrupted") {
		t.Errorf("exit %d, stderr %q; want 130 and 'interrupted'", code, errOut)
	}
	for _, d := range []string{tmp, outDir} {
		if l, _ := os.ReadDir(d); len(l) > 0 {
			t.Errorf("files left in %s: %v", d, l)
		}
	}
}

// A real SIGTERM to a run blocked on its input: the process ends with 143
// within the grace period and removes its temporary files.
func TestSIGTERMChildProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	tmp := t.TempDir()
	outDir := t.TempDir()
	// The test binary runs as tracesched (see record_test.go's init).
	cmd := exec.Command(os.Args[0], "convert", "-", "-o", filepath.Join(outDir, "r.arrow"))
	cmd.Env = append(os.Environ(), mainEnv+"=1", "TMPDIR="+tmp)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdin.Write(bytes.Repeat([]byte{0}, 1<<16)) // the spool exists now; stdin stays open
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if l, _ := os.ReadDir(tmp); len(l) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if l, _ := os.ReadDir(tmp); len(l) == 0 {
		cmd.Process.Kill()
		t.Fatal("child never spooled its input")
	}
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("child: %v, want exit 143; stderr %s", err, stderr.String())
	}
	if d := time.Since(start); d > gracePeriod+5*time.Second {
		t.Errorf("child took %v to stop", d)
	}
	for _, d := range []string{tmp, outDir} {
		if l, _ := os.ReadDir(d); len(l) > 0 {
			t.Errorf("files left in %s: %v", d, l)
		}
	}
}

// An unknown command is a usage error (exit 2); --version prints one.
func TestUnknownCommandAndVersion(t *testing.T) {
	if _, _, code := run(t, "frobnicate"); code != exitUsage {
		t.Errorf("unknown command: exit %d, want 2", code)
	}
	out, _, code := run(t, "--version")
	if code != exitOK || !strings.HasPrefix(out, "tracesched version ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
}

// The inspector gets the terminal itself: bubbletea reads the size and
// sets the modes of an *os.File, and a wrapped stdout made it draw at
// 80x24 without clearing lines (seen in tmux at 120x36).
func TestTerminalOutUnwrapsStdout(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "tty")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ios := &IOStreams{Out: &checkedWriter{w: f}}
	if got, ok := terminalOut(ios).(*os.File); !ok || got != f {
		t.Errorf("terminalOut gave %T, want the *os.File under Main's checkedWriter", terminalOut(ios))
	}
}
