package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracesched/tracesched/device"
	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/report"
)

// reportOutputs are the report's output flags: --report (or report's -o),
// --svg and --png.
type reportOutputs struct {
	html, svgDir, pngDir string
}

func (o *reportOutputs) any() bool { return o.html != "" || o.svgDir != "" || o.pngDir != "" }

// addReportFlags registers the output flags; htmlFlag names the HTML one.
func addReportFlags(f *pflag.FlagSet, o *reportOutputs, htmlFlag, short string) {
	f.StringVarP(&o.html, htmlFlag, short, "", "write a self-contained HTML report to `FILE.html`")
	f.StringVar(&o.svgDir, "svg", "", "write each chart of the report as an .svg file into `DIR`")
	f.StringVar(&o.pngDir, "png", "", "write each chart as a .png file into `DIR` (rasterised by a headless Chromium on PATH)")
}

// args returns the flags as a command line gives them.
func (o *reportOutputs) args(htmlFlag string) []string {
	var a []string
	if o.html != "" {
		a = append(a, htmlFlag, o.html)
	}
	if o.svgDir != "" {
		a = append(a, "--svg", o.svgDir)
	}
	if o.pngDir != "" {
		a = append(a, "--png", o.pngDir)
	}
	return a
}

// write renders the report of res and writes every output asked for, each
// file atomically.
func (o *reportOutputs) write(ctx context.Context, ios *IOStreams, res *diff.Result, run report.Run) error {
	if !o.any() {
		return nil
	}
	rep := report.New(res, run)
	if o.html != "" {
		var buf bytes.Buffer
		if err := rep.WriteHTML(&buf); err != nil {
			return err
		}
		if err := writeFileAtomic(ctx, ios, o.html, buf.Bytes()); err != nil {
			return err
		}
		fmt.Fprintf(ios.ErrOut, "tracesched: wrote %s (%d bytes, %d charts)\n", o.html, buf.Len(), len(rep.Charts()))
	}
	if o.svgDir != "" {
		if err := os.MkdirAll(o.svgDir, 0o755); err != nil {
			return err
		}
		for _, c := range rep.Charts() {
			if err := writeFileAtomic(ctx, ios, filepath.Join(o.svgDir, c.Name+".svg"), []byte(c.SVG(true))); err != nil {
				return err
			}
		}
		fmt.Fprintf(ios.ErrOut, "tracesched: wrote %d charts to %s\n", len(rep.Charts()), o.svgDir)
	}
	if o.pngDir != "" {
		if err := writePNGs(ctx, ios, o.pngDir, rep.Charts()); err != nil {
			return err
		}
		fmt.Fprintf(ios.ErrOut, "tracesched: wrote %d PNG charts to %s\n", len(rep.Charts()), o.pngDir)
	}
	return nil
}

// writeFileAtomic writes data to name through an atomicFile.
func writeFileAtomic(ctx context.Context, ios *IOStreams, name string, data []byte) error {
	f, err := createAtomic(ctx, ios, name)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return f.Commit()
}

// chromium returns the path of a Chromium-like browser on PATH, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// writePNGs rasterises each chart with a headless Chromium (no network,
// a throwaway profile), writing each PNG atomically.
func writePNGs(ctx context.Context, ios *IOStreams, dir string, charts []*report.Chart) error {
	browser := chromium()
	if browser == "" {
		return errors.New("--png needs a Chromium (chromium, chromium-browser or google-chrome) on PATH; --svg writes the charts without one")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "tracesched-png")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, c := range charts {
		svg := c.SVG(true)
		w, h := svgSize(svg)
		src := filepath.Join(tmp, c.Name+".svg")
		if err := os.WriteFile(src, []byte(svg), 0o644); err != nil {
			return err
		}
		shot := filepath.Join(tmp, c.Name+".png")
		shotCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
		cmd := exec.CommandContext(shotCtx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars", "--user-data-dir="+filepath.Join(tmp, "profile"),
			"--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", w, h), "file://"+src)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("rasterising %s with %s: %w: %s", c.Name, browser, err, lastLine(out))
		}
		data, err := os.ReadFile(shot)
		if err != nil {
			return fmt.Errorf("rasterising %s with %s: no screenshot: %w", c.Name, browser, err)
		}
		if err := writeFileAtomic(ctx, ios, filepath.Join(dir, c.Name+".png"), data); err != nil {
			return err
		}
	}
	return nil
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// svgSize reads the width and height attributes of a standalone chart.
func svgSize(svg string) (w, h int) {
	w, h = 760, 400
	attr := func(name string) int {
		i := strings.Index(svg, " "+name+`="`)
		if i < 0 {
			return 0
		}
		rest := svg[i+len(name)+3:]
		j := strings.IndexByte(rest, '"')
		if j < 0 {
			return 0
		}
		v, err := strconv.ParseFloat(rest[:j], 64)
		if err != nil {
			return 0
		}
		return int(v + 0.999)
	}
	if v := attr("width"); v > 0 {
		w = v
	}
	if v := attr("height"); v > 0 {
		h = v
	}
	return w, h
}

// buildInfo names the program's version and build.
func buildInfo() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, when, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " (" + rev + " " + when + modified + ")"
	}
	return v + ", " + bi.GoVersion
}

// fileSize returns a regular file's size, 0 when it is not one.
func fileSize(name string) int64 {
	if st, err := os.Stat(name); err == nil && st.Mode().IsRegular() {
		return st.Size()
	}
	return 0
}

// replayCommand is the command line that reproduces a replay: every
// setting that shapes the prediction spelt out, defaults included
// (--mode, --seed, --hz, --work, --stalls, --host), weights by cgroup id.
func replayCommand(opts *replayOptions, model schedModel, weights map[uint64]int) []string {
	a := []string{"tracesched", "replay", "--sched", model.name}
	if len(model.kernels) > 0 {
		k := opts.kernel
		if k == "" {
			k = model.kernel
		}
		a = append(a, "--kernel", k)
	}
	a = append(a, "--mode", opts.mode, "--seed", strconv.FormatUint(opts.seed, 10), "--hz", strconv.Itoa(opts.hz),
		"--work", opts.work, "--stalls", opts.stalls, "--host", opts.hostPath)
	if opts.recordedSched != "" {
		a = append(a, "--recorded-sched", opts.recordedSched)
	}
	if sets, err := parseSets(opts.sets); err == nil {
		for _, k := range slices.Sorted(maps.Keys(sets)) {
			a = append(a, "--set", k+"="+sets[k])
		}
	}
	for _, id := range slices.Sorted(maps.Keys(weights)) {
		a = append(a, "--weight", fmt.Sprintf("%d=%d", id, weights[id]))
	}
	if fs, err := parseFeatures(opts.features); err == nil {
		for _, k := range slices.Sorted(maps.Keys(fs)) {
			v := "off"
			if fs[k] {
				v = "on"
			}
			a = append(a, "--feature", k+"="+v)
		}
	}
	for _, p := range opts.ioprios {
		a = append(a, "--ioprio", p)
	}
	for _, w := range opts.bfqWarm {
		a = append(a, "--bfq-warm", w)
	}
	if opts.devicePath != "" {
		a = append(a, "--device", opts.devicePath)
	}
	return append(a, opts.input)
}

// replayReportRun describes a replay for its report.
func replayReportRun(opts *replayOptions, model schedModel, res *diff.Result, q replay.Queue, fitNote string) report.Run {
	var known map[uint64]string
	if res.RealSide != nil {
		known = res.RealSide.Meta.Cgroups
	}
	weights, _ := parseWeights(opts.weights, known)
	sets, _ := parseSets(opts.sets)
	features, _ := parseFeatures(opts.features)
	kernel := opts.kernel
	if kernel == "" {
		kernel = model.kernel
	}
	run := report.Run{
		Commands:  []string{report.ShellQuote(append(replayCommand(opts, model, weights), opts.reports.args("--report")...))},
		Inputs:    []report.Input{{Role: "capture", Name: opts.input, Bytes: fileSize(opts.input)}},
		Scheduler: model.name, Kernel: kernel, Mode: opts.mode,
		Tunables: sets, Weights: weights, Features: features,
		Seed: opts.seed, HZ: opts.hz, Queue: queueText(q), Device: fitNote,
		Fit:   reportFit(opts.fit),
		Build: buildInfo(),
	}
	if opts.devicePath != "" {
		run.Inputs = append(run.Inputs, report.Input{Role: "device model", Name: opts.devicePath, Bytes: fileSize(opts.devicePath)})
	}
	return run
}

// reportFit copies a calibration fit for the report.
func reportFit(fit *device.Fit) *report.DeviceFit {
	if fit == nil {
		return nil
	}
	score := func(s device.Score) report.FitScore {
		return report.FitScore{Kind: s.Kind.String(), Train: s.Train, Test: s.Test, Demerit: s.Demerit, DemeritFraction: s.DemeritFraction, HalvesFraction: s.HalvesFraction}
	}
	out := &report.DeviceFit{
		Kind: fit.Kind.String(), Forced: fit.Forced, N: fit.N, Skipped: fit.Skipped, MeanD2C: fit.MeanD2C, ModelMeanD2C: fit.ModelMeanD2C,
		Demerit: fit.Demerit, DemeritFraction: fit.DemeritFraction, CV: score(fit.CV),
		GapUnder: fit.CompletionGaps.UnderNs, GapReal: fit.CompletionGaps.Real, GapModel: fit.CompletionGaps.Model,
		Summary: fit.String(),
	}
	for _, c := range fit.Candidates {
		out.Candidates = append(out.Candidates, score(c))
	}
	return out
}

type reportOptions struct {
	real, pred string
	weights    []string
	out        reportOutputs
}

func newReportCmd(ios *IOStreams) *cobra.Command {
	opts := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report REAL PREDICTED -o FILE.html [--svg DIR] [--png DIR]",
		Short: "Write a self-contained HTML report of a diff, with charts",
		Long: `Report compares two traces of the same workload as diff does and writes one HTML file
that any browser opens and a mail archive can host: no scripts, fonts or images fetched
from anywhere, inline CSS and SVG only, readable in light and dark mode. It holds the run's
parameters and the command lines that reproduce it, per-cgroup and per-process bandwidth
over time, Q2C and D2C latency CDFs per cgroup, real against predicted dispatch rank with
the divergences marked, think-time classes and merges over time, the scheduler decisions
behind the top divergences and the device model's fit, each chart with a table of its
numbers. It stays small (aggregated, never every point): well under 2 MB for a
million-request replay.

REAL and PREDICTED are any inputs, typically a capture and a replay's -o output, whose
metadata records the replay's command line. ` + "`tracesched replay ... --report FILE.html`" + ` does the
replay and the report in one step and adds the device model's calibration.

--svg DIR writes each chart as an .svg file (for a plain-text post); --png DIR as a .png,
rasterised by a headless Chromium found on PATH.`,
		Example: `  # Replay and report in one step
  $ tracesched replay --sched bfq --weight 1181=100 --weight 1201=900 sda --report bfq.html

  # Report on a replay kept with -o, and the charts as SVG files
  $ tracesched replay --sched bfq sda -o bfq.arrow
  $ tracesched report sda bfq.arrow -o bfq.html --svg charts/`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.real, opts.pred = args[0], args[1]
			if !opts.out.any() {
				return usagef("report needs -o FILE.html, --svg DIR or --png DIR")
			}
			return reportRun(cmd.Context(), ios, opts)
		},
	}
	addReportFlags(cmd.Flags(), &opts.out, "output", "o")
	cmd.Flags().StringArrayVar(&opts.weights, "weight", nil, "cgroup weight `CGROUP=W` to report beside its shares (repeatable)")
	return cmd
}

func reportRun(ctx context.Context, ios *IOStreams, opts *reportOptions) error {
	realSide, meta, err := loadSide(ctx, ios, opts.real)
	if err != nil {
		return err
	}
	predSide, pmeta, err := loadSide(ctx, ios, opts.pred)
	if err != nil {
		return err
	}
	weights, err := parseWeights(opts.weights, meta.Cgroups)
	if err != nil {
		return err
	}
	// The prediction's settings, as a replay records them.
	sets := map[string]string{}
	for k, v := range pmeta.Extra {
		if name, ok := strings.CutPrefix(k, "set."); ok {
			sets[name] = v
		}
	}
	idle, idleOff := diff.ThinkOptions(sets)
	result := diff.Compare(realSide, predSide, diff.Options{Weights: weights, SliceIdle: idle, IdleOff: idleOff})
	run := report.Run{
		Inputs:    []report.Input{{Role: "capture", Name: opts.real, Bytes: fileSize(opts.real)}, {Role: "predicted", Name: opts.pred, Bytes: fileSize(opts.pred)}},
		Scheduler: pmeta.Extra["scheduler"], Kernel: pmeta.Kernel, Mode: pmeta.Extra["mode"],
		Tunables: sets, Weights: weights, Build: buildInfo(),
	}
	if c := pmeta.Extra["command"]; c != "" {
		run.Notes = append(run.Notes, "The first command line is the one "+opts.pred+" records in its metadata.")
		run.Commands = append(run.Commands, c)
	}
	cmdline := []string{"tracesched", "report", opts.real, opts.pred}
	for _, id := range slices.Sorted(maps.Keys(weights)) {
		cmdline = append(cmdline, "--weight", fmt.Sprintf("%d=%d", id, weights[id]))
	}
	run.Commands = append(run.Commands, report.ShellQuote(append(cmdline, opts.out.args("-o")...)))
	return opts.out.write(ctx, ios, result, run)
}
