package main

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tracesched/tracesched/diff"
	"github.com/tracesched/tracesched/trace"
	"github.com/tracesched/tracesched/tui"
)

func newTUICmd(ios *IOStreams) *cobra.Command {
	var weights []string
	var view string
	var mf manifestFlags
	cmd := &cobra.Command{
		Use:   "tui INPUT [PREDICTED]",
		Short: "Inspect a trace, or a trace against a prediction, in the terminal",
		Long: `Tui opens the terminal inspector: the headline figures, the ranked divergences
(filter with /, sort with s, Enter opens one), a timeline of real and predicted dispatch
side by side with the schedulers' messages inline, per-cgroup bandwidth over time, and
per-queue think time. With one INPUT it inspects that trace alone. Keys: ? help, Esc
back, q quit. ` + "`tracesched replay ... --tui`" + ` opens it on a replay's result.`,
		Example: `  $ tracesched replay --sched bfq sda -o bfq.arrow
  $ tracesched tui sda bfq.arrow`,
		Args: rangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, ok := tui.ParseView(view)
			if !ok {
				return usagef("invalid --view %q: want one of %s", view, strings.Join(tui.ViewNames(), ", "))
			}
			if !isTerminal(ios) {
				return usagef("tui needs a terminal on standard input and output")
			}
			real, pred := args[0], args[0]
			if len(args) == 2 {
				pred = args[1]
			}
			ctx := cmd.Context()
			info := tui.RunInfo{Inputs: args}
			load := func(progress func(done, total int64)) (*diff.Result, tui.RunInfo, error) {
				realSide, meta, err := loadSideQuiet(ctx, real, progress)
				if err != nil {
					return nil, info, err
				}
				predSide := realSide
				if len(args) == 2 {
					if predSide, _, err = loadSideQuiet(ctx, pred, progress); err != nil {
						return nil, info, err
					}
					info.Scheduler, info.Kernel = predSide.Meta.Extra["scheduler"], predSide.Meta.Kernel
				}
				mctx, err := mf.load(real)
				if err != nil {
					return nil, info, err
				}
				w, err := parseWeights(weights, mctx.cgroupPaths(meta.Cgroups))
				if err != nil {
					return nil, info, err
				}
				w, _ = mctx.replayWeights(w)
				info.Weights = w
				return diff.Compare(realSide, predSide, thinkOptions(diff.Options{Weights: w}, predSide.Meta, realSide.Meta)), info, nil
			}
			return tui.RunLoading(ctx, load, ios.In, terminalOut(ios), tui.WithView(v))
		},
	}
	cmd.Flags().StringArrayVar(&weights, "weight", nil, "cgroup weight `CGROUP=W` to show beside its shares (repeatable; default: the manifest's)")
	cmd.Flags().StringVar(&view, "view", "overview", "the view to open on, `NAME`: "+strings.Join(tui.ViewNames(), ", ")+" (keys 1-5 switch)")
	mf.register(cmd.Flags())
	return cmd
}

// loadSideQuiet reads a whole input into a diff side, reporting progress
// as events read (the total is unknown: -1); nothing goes to stderr, which
// the inspector owns.
func loadSideQuiet(ctx context.Context, name string, progress func(done, total int64)) (*diff.Side, trace.Meta, error) {
	src, err := openInput(ctx, name)
	if err != nil {
		return nil, trace.Meta{}, err
	}
	defer src.Close()
	side := diff.NewSide(trace.Meta{})
	var n int64
	tick := func(k uint64) {
		if n += int64(k); n&0xffff == 0 {
			progress(n, -1)
		}
	}
	if err := drain(src, tick, func(e *trace.Event) error { side.Add(e); return nil }); err != nil {
		return nil, trace.Meta{}, err
	}
	meta := src.Meta()
	side.Meta = meta
	side.Finish()
	return side, meta, nil
}

// runTUI opens the terminal inspector on a result.
func runTUI(ctx context.Context, ios *IOStreams, res *diff.Result, info tui.RunInfo) error {
	if !isTerminal(ios) {
		return usagef("--tui needs a terminal on standard input and output")
	}
	return tui.Run(ctx, res, info, ios.In, terminalOut(ios))
}

// terminalOut is standard output as the inspector needs it: the terminal
// itself (an *os.File, whose size and modes bubbletea reads), not the
// checkedWriter that Main wraps around it for data.
func terminalOut(ios *IOStreams) io.Writer {
	if c, ok := ios.Out.(*checkedWriter); ok {
		return c.w
	}
	return ios.Out
}

// isTerminal reports whether the streams are the process's terminal.
func isTerminal(ios *IOStreams) bool {
	in, ok := ios.In.(*os.File)
	return ok && ios.OutTTY && term.IsTerminal(int(in.Fd()))
}

// termWidth returns stdout's width when it is a terminal, else -1: output
// to a file or a pipe is not cut.
func termWidth(ios *IOStreams) int {
	if ios.OutTTY {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 20 {
			return w
		}
		return 100
	}
	return -1
}
