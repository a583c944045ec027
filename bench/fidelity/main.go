// Command fidelity measures how faithful the scheduler models are: it
// replays every capture of the team's shared directory through the model of
// the scheduler it was recorded under and writes the headline figures of
// the diff to docs/fidelity.md; it also replays the recorded captures
// through CFQ and writes what CFQ would have done to docs/cfq-whatif.md.
//
//	go run ./bench/fidelity [-only NAME,...] [-o DIR|FILE.md] [-seed N] [-seeds N,...] [-no-cfq] [-wbt] [-bfq-feature NAME=on|off]... [-captures DIR]...
//
// The captures are those of ../shared/captures/recorded, recorded-fs and
// small ($TRACESCHED_SHARED instead of ../shared when
// set), each with its manifest.json: the scheduler, the tunables the
// capture changed (tunables_requested), the device's rotational flag and
// the cgroups' ids and BFQ weights. Each is replayed closed-loop, as
// `tracesched replay` does, with a device model calibrated from the
// capture itself; the libraries are called directly, one capture at a
// time. Progress goes to stderr.
//
// -captures DIR (repeatable) adds the captures of a directory recorded with
// ../shared/rig outside the repository (bench/fidelity/record-fs.sh writes
// /tmp/fs-captures): each subdirectory NAME with its manifest.json and
// NAME.blktrace.N[.zst], replayed the same way and written to a section of
// their own in fidelity.md, which names the directory. They are not in
// the CFQ what-ifs.
//
// The output is deterministic: the same captures and code give the same
// markdown, except the header's two lines (the date and commit, and the
// replays' wall times).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tracesched/tracesched/internal/shared"
)

func main() {
	only := flag.String("only", "", "replay only these captures: comma-separated names (`a-bfq-w100-900,fx-bfq-4seqread`)")
	out := flag.String("o", "", "write the docs to `DIR` (fidelity.md and cfq-whatif.md), or fidelity.md to FILE.md and cfq-whatif.md beside it (default: docs/ of the module)")
	seed := flag.Uint64("seed", 1, "seed of the device models' random draws")
	noCFQ := flag.Bool("no-cfq", false, "skip the CFQ what-if replays and do not write cfq-whatif.md")
	var seeds seedList
	flag.Var(&seeds, "seeds", "also replay the captures that issues 3 and 11 judge at these `SEEDS` (comma-separated, e.g. 2,3) and tabulate their verdicts beside -seed's")
	wbt := flag.Bool("wbt", false, "model the writeback throttle (replay.Queue.WBTLat) where the manifest gives wbt_lat_usec, as `tracesched replay --set wbt_lat_usec=N` does")
	bfqFeatures := featureFlips{}
	flag.Var(bfqFeatures, "bfq-feature", "flip one historical behaviour of the BFQ model in every BFQ replay, as `tracesched replay --feature NAME=on|off` does (`NAME=on|off`); repeatable")
	var extra dirList
	flag.Var(&extra, "captures", "also replay the captures of `DIR` (one subdirectory per capture, recorded with ../shared/rig, e.g. by bench/fidelity/record-fs.sh), in a section of their own; repeatable")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: go run ./bench/fidelity [flags]\n\nReplays every shared capture through its scheduler's model and writes docs/fidelity.md\nand docs/cfq-whatif.md.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := mainErr(*only, *out, *seed, seeds, !*noCFQ, *wbt, bfqFeatures, extra); err != nil {
		fmt.Fprintf(os.Stderr, "fidelity: %v\n", err)
		os.Exit(1)
	}
}

// dirList is a repeatable flag of directories.
type dirList []string

func (d *dirList) String() string { return strings.Join(*d, ",") }

func (d *dirList) Set(v string) error {
	if v == "" {
		return fmt.Errorf("empty directory")
	}
	*d = append(*d, v)
	return nil
}

// featureFlips is a repeatable flag of NAME=on|off feature flips; a name
// given twice takes its last value.
type featureFlips map[string]bool

func (f featureFlips) String() string {
	var s []string
	for k, v := range f {
		s = append(s, k+"="+map[bool]string{true: "on", false: "off"}[v])
	}
	sort.Strings(s)
	return strings.Join(s, ",")
}

func (f featureFlips) Set(v string) error {
	name, val, ok := strings.Cut(v, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return fmt.Errorf("feature %q: want NAME=on|off", v)
	}
	switch strings.TrimSpace(val) {
	case "on":
		f[name] = true
	case "off":
		f[name] = false
	default:
		return fmt.Errorf("feature %q: value %q, want on or off", name, val)
	}
	return nil
}

// seedList is a comma-separated flag of seeds.
type seedList []uint64

func (l *seedList) String() string {
	var s []string
	for _, v := range *l {
		s = append(s, strconv.FormatUint(v, 10))
	}
	return strings.Join(s, ",")
}

func (l *seedList) Set(v string) error {
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return fmt.Errorf("seed %q: %w", f, err)
		}
		*l = append(*l, n)
	}
	return nil
}

func mainErr(only, out string, seed uint64, seeds []uint64, withCFQ, wbt bool, bfqFeatures featureFlips, extraDirs []string) error {
	root := shared.Root()
	dir := shared.Dir()
	if dir == "" {
		where := "../shared beside the module root"
		if root != "" {
			where = filepath.Join(filepath.Dir(root), "shared")
		}
		if env := os.Getenv("TRACESCHED_SHARED"); env != "" {
			where = "$TRACESCHED_SHARED=" + env
		}
		return fmt.Errorf("the shared directory is absent (%s): it holds the captures this program replays; set $TRACESCHED_SHARED to it", where)
	}
	capDir := filepath.Join(dir, "captures")
	all, err := discover(capDir)
	if err != nil {
		return err
	}
	if len(all) == 0 {
		return fmt.Errorf("no captures under %s/recorded or %s/small", capDir, capDir)
	}
	extra, err := discoverExtra(extraDirs)
	if err != nil {
		return err
	}
	all = append(all, extra...)
	caps, err := selectCaptures(all, only)
	if err != nil {
		return err
	}
	for _, c := range caps {
		c.Man.wbt = wbt
		if len(bfqFeatures) > 0 {
			c.Man.bfqFeatures = bfqFeatures
		}
	}
	fidPath, cfqPath, err := outputs(out, root)
	if err != nil {
		return err
	}

	start := time.Now()
	var results []*result
	failed := 0
	for i, c := range caps {
		fmt.Fprintf(os.Stderr, "fidelity: [%d/%d] %s/%s\n", i+1, len(caps), c.Group, c.Name)
		r := measure(c, seed, withCFQ, os.Stderr)
		if r.Err != nil {
			failed++
			fmt.Fprintf(os.Stderr, "fidelity: %s: %v\n", c.Name, r.Err)
		}
		results = append(results, r)
	}
	byName := map[string]*result{}
	for _, r := range results {
		byName[r.C.Group+"/"+r.C.Name] = r
	}
	var cross []*crossResult
	for _, p := range crossPairs(caps) {
		fmt.Fprintf(os.Stderr, "fidelity: cross-scheduler %s -> bfq (against %s)\n", p.MQ.Name, p.BFQ.Name)
		cr := measureCross(p, byName[p.BFQ.Group+"/"+p.BFQ.Name], seed, os.Stderr)
		if cr.Err != nil {
			failed++
			fmt.Fprintf(os.Stderr, "fidelity: %s through bfq: %v\n", p.MQ.Name, cr.Err)
		}
		cross = append(cross, cr)
	}
	var atSeeds []seedResults
	for _, sd := range seeds {
		sr := seedResults{Seed: sd, By: map[*capture]*result{}}
		for _, c := range caps {
			if !judged(c) {
				continue
			}
			fmt.Fprintf(os.Stderr, "fidelity: seed %d: %s/%s\n", sd, c.Group, c.Name)
			r := measure(c, sd, false, io.Discard)
			if r.Err != nil {
				failed++
				fmt.Fprintf(os.Stderr, "fidelity: %s at seed %d: %v\n", c.Name, sd, r.Err)
			}
			sr.By[c] = r
		}
		atSeeds = append(atSeeds, sr)
	}
	h := header{
		Date:   time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		Commit: commit(root),
		Only:   only,
		Total:  time.Since(start),
		Seed:   seed,
		Extra:  extraDirs,
	}

	var b bytes.Buffer
	writeFidelity(&b, h, results, cross, atSeeds)
	if err := writeFile(fidPath, b.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "fidelity: wrote %s\n", fidPath)
	if withCFQ {
		b.Reset()
		writeCFQ(&b, h, results)
		if err := writeFile(cfqPath, b.Bytes()); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "fidelity: wrote %s\n", cfqPath)
	}
	fmt.Fprintf(os.Stderr, "fidelity: %d captures in %.0f s\n", len(caps), time.Since(start).Seconds())
	if failed > 0 {
		return fmt.Errorf("%d of %d captures or cross-scheduler pairs failed (their rows say why)", failed, len(caps)+len(cross))
	}
	return nil
}

// outputs resolves -o into the two files' paths.
func outputs(out, root string) (fid, cfqw string, err error) {
	switch {
	case out == "":
		if root == "" {
			return "", "", fmt.Errorf("not inside the module (no go.mod above the working directory): say where to write with -o")
		}
		out = filepath.Join(root, "docs")
	case strings.HasSuffix(out, ".md"):
		return out, filepath.Join(filepath.Dir(out), "cfq-whatif.md"), nil
	}
	return filepath.Join(out, "fidelity.md"), filepath.Join(out, "cfq-whatif.md"), nil
}

// writeFile writes data to path through a temporary file in its directory.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fidelity-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// commit returns `git rev-parse --short HEAD` of the module, marked when
// the work tree has changes, or "unknown".
func commit(root string) string {
	if root == "" {
		return "unknown"
	}
	b, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(b))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += " (with uncommitted changes)"
	}
	return c
}
