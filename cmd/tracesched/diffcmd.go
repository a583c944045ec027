package main

import (
	"context"
	"github.com/spf13/cobra"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/tui"
)

type diffOptions struct {
	real, pred string
	json       bool
	tui        bool
	weights    []string
	mapMode    string   // --map: "", auto or none
	mapPIDs    []string // --map-pid REAL=PREDICTED
	mf         manifestFlags
}

func newDiffCmd(ios *IOStreams) *cobra.Command {
	opts := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff REAL PREDICTED [--json]",
		Short: "Compare two traces of the same workload",
		Long: `Diff lines up every bio of two traces of the same workload by (process, position in
that process's stream) and compares them: dispatch order (Kendall tau, displacement,
ranked divergence windows), per-cgroup bandwidth over time, request and queue merges,
think-time classification, latency distributions (DiskSim demerit) and, where both
carry scheduler messages, the scheduler's decisions. REAL and PREDICTED are any inputs:
a capture against a replay's -o output, two replays, or two captures.`,
		Example: `  $ tracesched replay --sched bfq sda -o bfq.arrow
  $ tracesched replay --sched mq-deadline sda -o mqdl.arrow
  $ tracesched diff bfq.arrow mqdl.arrow`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.real, opts.pred = args[0], args[1]
			if opts.json && opts.tui {
				return usagef("--json and --tui exclude each other")
			}
			if opts.mapMode != "" && opts.mapMode != "auto" && opts.mapMode != "none" {
				return usagef("invalid value for --map: %q (want auto or none)", opts.mapMode)
			}
			if _, err := parsePIDMap(opts.mapPIDs); err != nil {
				return usagef("%v", err)
			}
			return diffRun(cmd.Context(), ios, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	cmd.Flags().BoolVar(&opts.tui, "tui", false, "open the terminal inspector on the result")
	cmd.Flags().StringArrayVar(&opts.weights, "weight", nil, "cgroup weight `CGROUP=W` to report beside its shares (repeatable; default: REAL's manifest)")
	opts.mf.register(cmd.Flags())
	cmd.Flags().StringVar(&opts.mapMode, "map", "", "pair the processes of two runs: `auto` (command name and start order, cgroups by path) or none (default: auto when the traces share no bio)")
	cmd.Flags().StringArrayVar(&opts.mapPIDs, "map-pid", nil, "pair process `REAL=PREDICTED` (pids; repeatable; implies --map none for the others)")
	return cmd
}

func diffRun(ctx context.Context, ios *IOStreams, opts *diffOptions) error {
	realSide, meta, err := loadSide(ctx, ios, opts.real)
	if err != nil {
		return err
	}
	predSide, _, err := loadSide(ctx, ios, opts.pred)
	if err != nil {
		return err
	}
	mctx, err := opts.mf.load(opts.real)
	if err != nil {
		return err
	}
	meta.Cgroups = mctx.cgroupPaths(meta.Cgroups)
	weights, err := parseWeights(opts.weights, meta.Cgroups)
	if err != nil {
		return err
	}
	// Both sides' cgroup paths, their manifests' included, so that two
	// runs of one workload pair their cgroups by path (--map auto): the
	// ids differ between runs. The prediction's manifest is the one beside
	// it (--manifest names the real side's).
	realSide.Meta.Cgroups = meta.Cgroups
	if !opts.mf.off {
		pctx, err := (&manifestFlags{}).load(opts.pred)
		if err != nil {
			return err
		}
		predSide.Meta.Cgroups = pctx.cgroupPaths(predSide.Meta.Cgroups)
	}
	predSide, err = mapSides(ios, realSide, predSide, opts.mapMode, opts.mapPIDs)
	if err != nil {
		return err
	}
	weights, _ = mctx.replayWeights(weights)
	warnManifestIncomplete(ios.ErrOut, mctx)
	defer phaseGC(arrayPhaseGCPercent, false)()
	result := diff.Compare(realSide, predSide, thinkOptions(diff.Options{Weights: weights}, predSide.Meta, realSide.Meta))
	switch {
	case opts.json:
		return result.WriteJSON(ios.Out)
	case opts.tui:
		return runTUI(ctx, ios, result, tui.RunInfo{Inputs: []string{opts.real, opts.pred}, Scheduler: predSide.Meta.Extra["scheduler"], Kernel: predSide.Meta.Kernel})
	}
	return result.WriteText(ios.Out, termWidth(ios))
}
