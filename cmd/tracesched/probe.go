package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracesched/tracesched/device"
)

type probeOptions struct {
	target      string
	out         string
	budget      time.Duration
	destructive bool
	readOnly    bool
	size        int64
	json        bool
	seed        uint64
	quantiles   int
	passes      int
}

func newProbeCmd(ios *IOStreams) *cobra.Command {
	opts := &probeOptions{}
	cmd := &cobra.Command{
		Use:   "probe DEVICE|FILE -o DEVICE.json [--budget 30s] [--destructive]",
		Short: "Measure a device with a short direct-I/O sweep and fit a device model",
		Long: `Probe measures a block device or a file with a short sweep of direct I/O (O_DIRECT):
reads and writes, random and sequential, sizes 4 KiB to 1 MiB, 1 to 64 requests in flight,
and (when it may write) 4 KiB writes each followed by a flush (fdatasync), every step an
equal share of the time left of --budget (--passes N runs the grid N times, each pass in
another order, within the same budget). Each request is timed from its system call to its
return, and the device model is calibrated from those times exactly as from a capture's
D2C times (the flushes as a capture's flush requests), so replay --device takes the result.
Unlike a capture, the sweep covers depths, sizes and operations the workload may not show.
The fit is printed with each step's measured IOPS, MiB/s and mean latency beside the model's
mean latency for the same requests.

Probe never writes to a target that holds data (any non-zero byte in 64 samples of 1 MiB
spread over it), nor to a mounted device, unless --destructive is given (never for a
mounted one, nor for a device something else holds: swap, md, device mapper; a device is
opened for writing exclusively): it then measures reads only, and says so. A FILE that does not exist is
created, zero-filled, of --size bytes; a new or zero-filled target is written freely.`,
		Example: `  # A scratch loop device over a new zero-filled image
  $ truncate -s 0 /tmp/probe.img && tracesched probe /tmp/probe.img -o probe.device.json
  $ losetup --direct-io=on -f --show /tmp/img && tracesched probe /dev/loop3 -o dev.json
  $ tracesched replay --sched bfq --device dev.json capture`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.target = args[0]
			if opts.out == "" {
				return usagef("probe needs -o DEVICE.json")
			}
			if opts.budget < 100*time.Millisecond {
				return usagef("invalid --budget %v: want at least 100ms", opts.budget)
			}
			if opts.passes < 1 || opts.passes > 16 {
				return usagef("invalid --passes %d: want 1 to 16", opts.passes)
			}
			if opts.quantiles < 16 {
				return usagef("invalid --quantiles %d: want at least 16", opts.quantiles)
			}
			if opts.size < 64<<20 {
				return usagef("invalid --size %d: want at least 64 MiB", opts.size)
			}
			return probeRun(cmd.Context(), ios, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.out, "output", "o", "", "write the model to `FILE` (JSON)")
	f.DurationVar(&opts.budget, "budget", device.DefaultProbeBudget, "time the whole sweep may take")
	f.BoolVar(&opts.destructive, "destructive", false, "write even to a target that holds data (its contents are overwritten)")
	f.BoolVar(&opts.readOnly, "read-only", false, "measure reads only")
	f.Int64Var(&opts.size, "size", 256<<20, "size of the FILE to create when it does not exist, `bytes`")
	f.BoolVar(&opts.json, "json", false, "print the fit as JSON")
	f.Uint64Var(&opts.seed, "seed", 1, "seed of the model's random draws when scoring")
	f.IntVar(&opts.passes, "passes", 1, "run the sweep's grid `N` times, each in another order, within the one budget")
	f.IntVar(&opts.quantiles, "quantiles", 1024, "resolution of the model's residual tables (`N`+1 entries at most; a capture's calibration uses 1024)")
	return cmd
}

// loadAverage returns the 1-minute load average from /proc/loadavg, ""
// where there is none.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// mounted reports whether path (a block device) is mounted, from /proc/mounts.
func mounted(path string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	f, err := os.Open("/proc/mounts")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		dev, _, _ := strings.Cut(sc.Text(), " ")
		if r, err := filepath.EvalSymlinks(dev); err == nil && r == real {
			return true
		}
	}
	return false
}

func probeRun(ctx context.Context, ios *IOStreams, opts *probeOptions) error {
	created := false
	st, err := os.Stat(opts.target)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := device.CreateZeroFile(opts.target, opts.size); err != nil {
			return fmt.Errorf("creating %s: %w", opts.target, err)
		}
		created = true
		fmt.Fprintf(ios.ErrOut, "tracesched: created %s, %d bytes of zeros\n", opts.target, opts.size)
	case err != nil:
		return err
	case st.IsDir():
		return usagef("%s is a directory: give a block device or a file", opts.target)
	}
	f, err := device.OpenDirect(opts.target, false)
	if err != nil {
		return err
	}
	size, err := device.TargetSize(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", opts.target, err)
	}
	if size < 1<<20 {
		f.Close()
		return fmt.Errorf("%s: %d bytes: too small to probe (want at least 1 MiB)", opts.target, size)
	}
	writes := !opts.readOnly
	if writes && !created {
		isDev := st != nil && st.Mode()&os.ModeDevice != 0
		switch holds, err := device.HoldsData(f, size); {
		case err != nil:
			f.Close()
			return err
		case isDev && mounted(opts.target):
			writes = false
			fmt.Fprintf(ios.ErrOut, "tracesched: %s is mounted: measuring reads only\n", opts.target)
		case holds && !opts.destructive:
			writes = false
			fmt.Fprintf(ios.ErrOut, "tracesched: %s holds data: measuring reads only (--destructive writes over it)\n", opts.target)
		}
	}
	if writes {
		f.Close()
		f, err = device.OpenDirect(opts.target, true)
		if errors.Is(err, device.ErrInUse) {
			writes = false
			fmt.Fprintf(ios.ErrOut, "tracesched: %v: measuring reads only\n", err)
			f, err = device.OpenDirect(opts.target, false)
		}
		if err != nil {
			return err
		}
	}
	defer f.Close()
	po := device.ProbeOptions{Budget: opts.budget, Writes: writes, Passes: opts.passes}
	fmt.Fprintf(ios.ErrOut, "tracesched: probing %s (%d bytes) for up to %v\n", opts.target, size, opts.budget)
	start := time.Now()
	loadBefore := loadAverage()
	res, err := device.Probe(f, po)
	if err != nil {
		return err
	}
	swept := time.Since(start)
	loadAfter := loadAverage()
	model, fit, err := res.Calibrate(opts.seed, opts.quantiles)
	if err != nil {
		return fmt.Errorf("%s: calibrating from %d probe requests: %w", opts.target, len(res.Requests), err)
	}
	// Where and when, and how busy the machine was: a device shared with
	// other work measures differently from one run to the next.
	src := fmt.Sprintf("probe %s at %s", opts.target, start.UTC().Format(time.RFC3339))
	if loadBefore != "" && loadAfter != "" {
		src += fmt.Sprintf(", load average %s before, %s after", loadBefore, loadAfter)
		fmt.Fprintf(ios.ErrOut, "tracesched: 1-minute load average %s before the sweep, %s after\n", loadBefore, loadAfter)
	}
	model.Coverage.Sources = []string{src}
	out, err := createAtomic(ctx, ios, opts.out)
	if err != nil {
		return err
	}
	defer out.Abort()
	if err := model.Save(out); err != nil {
		return fmt.Errorf("writing %s: %w", opts.out, err)
	}
	if err := out.Commit(); err != nil {
		return err
	}
	fmt.Fprintf(ios.ErrOut, "tracesched: %d requests in %d steps (%d skipped) in %.1f s, fitted in %.1f s\n", len(res.Requests), len(res.Steps), res.Skipped, swept.Seconds(), (time.Since(start) - swept).Seconds())
	steps := res.StepFits(model, opts.seed)
	if opts.json {
		enc := json.NewEncoder(ios.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Fit   *device.Fit      `json:"fit"`
			Steps []device.StepFit `json:"steps"`
		}{fit, steps})
	}
	fmt.Fprintf(ios.Out, "probe %s\n%s", opts.target, fit)
	writeStepFits(ios.Out, steps)
	return nil
}

// writeStepFits prints the sweep's steps, sorted by name, with the model's
// error on each one's mean latency.
func writeStepFits(w io.Writer, steps []device.StepFit) {
	steps = slices.Clone(steps)
	slices.SortStableFunc(steps, func(a, b device.StepFit) int { return cmp.Compare(a.Step, b.Step) })
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "step\trequests\tIOPS\tMiB/s\tmean\tmodel mean\terror\t\n")
	for _, s := range steps {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.1f\t%v\t%v\t%+.0f%%\t\n", s.Step, s.Requests, s.IOPS, s.MiBps,
			s.Mean.Round(time.Microsecond), s.ModelMean.Round(time.Microsecond), 100*s.Error())
	}
	tw.Flush()
}
