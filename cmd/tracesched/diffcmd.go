package main

import (
	"github.com/spf13/cobra"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/tui"
)

type diffOptions struct {
	real, pred string
	json       bool
	tui        bool
	weights    []string
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
			return diffRun(ios, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	cmd.Flags().BoolVar(&opts.tui, "tui", false, "open the terminal inspector on the result")
	cmd.Flags().StringArrayVar(&opts.weights, "weight", nil, "cgroup weight `CGROUP=W` to report beside its shares (repeatable; default: REAL's manifest)")
	opts.mf.register(cmd.Flags())
	return cmd
}

func diffRun(ios *IOStreams, opts *diffOptions) error {
	realSide, meta, err := loadSide(ios, opts.real)
	if err != nil {
		return err
	}
	predSide, _, err := loadSide(ios, opts.pred)
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
	weights, _ = mctx.replayWeights(weights)
	warnIncomplete(ios.ErrOut, mctx)
	result := diff.Compare(realSide, predSide, diff.Options{Weights: weights})
	switch {
	case opts.json:
		return result.WriteJSON(ios.Out)
	case opts.tui:
		return runTUI(ios, result, tui.RunInfo{Inputs: []string{opts.real, opts.pred}, Scheduler: predSide.Meta.Extra["scheduler"], Kernel: predSide.Meta.Kernel})
	}
	return result.WriteText(ios.Out, termWidth(ios))
}
