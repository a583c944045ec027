package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracesched/tracesched/scheduler/bfq"
	"github.com/tracesched/tracesched/stats"
	"github.com/tracesched/tracesched/trace"
)

type statsOptions struct {
	input string
	json  bool
	by    string
	btt   bool
	mf    manifestFlags
}

func newStatsCmd(ios *IOStreams) *cobra.Command {
	opts := &statsOptions{}
	cmd := &cobra.Command{
		Use:   "stats INPUT [--json] [--by process|cgroup|device]",
		Short: "Summarize a capture: events, requests, latencies, merges, bandwidth",
		Long: `Stats prints the btt-grade summary of a capture: events by action, requests,
Q2G/G2I/I2D/D2C/Q2C latency (n, min, avg, max, p50, p99), merges, seek distances,
per-process and per-cgroup bandwidth, events dropped by the tracer (sequence gaps) and
missing per-CPU files. Unlike btt it reads cgroup-tagged events and needs no blkparse -d
pass; --btt counts latencies the way btt does, for comparison with its reports.`,
		Example: `  $ tracesched stats fixtures/fx-bfq-2cg-w100-900/fx-bfq-2cg-w100-900
  $ tracesched stats sda --json | jq '.latency.D2C'`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.input = args[0]
			switch opts.by {
			case "", "process", "cgroup", "device":
			default:
				return usagef("invalid value for --by: %q (want process, cgroup or device)", opts.by)
			}
			return statsRun(cmd.Context(), ios, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print JSON")
	cmd.Flags().StringVar(&opts.by, "by", "", "break the summary down by `process|cgroup|device`")
	cmd.Flags().BoolVar(&opts.btt, "btt", false, "count latencies as btt does")
	opts.mf.register(cmd.Flags())
	return cmd
}

// summarize reads a whole input into a Summary.
func summarize(ctx context.Context, ios *IOStreams, name string, btt bool) (stats.Summary, trace.Meta, error) {
	sum := stats.NewSummarizer(stats.SummaryOptions{BTT: btt})
	var maxBudget int64
	warmSeen := false
	meta, diag, err := readInput(ctx, ios, name, "stats", func(e *trace.Event) error {
		sum.Add(e)
		if !warmSeen && e.Action == trace.ActionMessage && strings.Contains(e.Text, "recalc_budg") {
			// BFQ's state when the trace began: its first message
			// that shows the tuned max budget (bfq.WarmState).
			if m := e.Message(); m.Sched == "bfq" {
				if w, ok := bfq.WarmState(strings.TrimSpace(m.Body)); ok {
					warmSeen, maxBudget = true, w["max_budget"]
				}
			}
		}
		return nil
	})
	if err != nil {
		return stats.Summary{}, trace.Meta{}, err
	}
	sum.SetDiagnostics(diag.DroppedEvents, diag.MissingCPUFiles)
	res := sum.Result()
	res.BFQMaxBudget = maxBudget
	warnIncomplete(ios, name, diag, res.Requests.Incomplete, res.Requests.Total)
	for i := range res.Cgroups {
		if res.Cgroups[i].Path == "" {
			res.Cgroups[i].Path = meta.Cgroups[res.Cgroups[i].ID]
		}
	}
	return res, meta, nil
}

func statsRun(ctx context.Context, ios *IOStreams, opts *statsOptions) error {
	mctx, err := opts.mf.load(opts.input)
	if err != nil {
		return err
	}
	res, meta, err := summarize(ctx, ios, opts.input, opts.btt)
	if err != nil {
		return err
	}
	fillCgroupPaths(&res, mctx)
	warnManifestIncomplete(ios.ErrOut, mctx)
	if opts.json {
		enc := json.NewEncoder(ios.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	if err := writeStatsText(ios.Out, &res, meta, opts.by); err != nil {
		return err
	}
	writeContext(ios.Out, mctx)
	return nil
}

// writeStatsText renders a Summary for people.
func writeStatsText(w io.Writer, s *stats.Summary, meta trace.Meta, by string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	devs := make([]string, len(meta.Devices))
	for i, d := range meta.Devices {
		devs[i] = d.String()
	}
	fmt.Fprintf(w, "source %s, devices %s, %.3f s\n\n", meta.Source, strings.Join(devs, " "), s.Span.Seconds)

	fmt.Fprintf(w, "events %d:", s.Events.Total)
	for _, l := range []string{"Q", "G", "I", "D", "C", "M", "F", "P", "U", "T", "A", "X", "R", "S", "B", "m"} {
		if n := s.Events.ByAction[l]; n > 0 {
			fmt.Fprintf(w, " %s %d", l, n)
		}
	}
	fmt.Fprintf(w, "\nrequests %d (reads %d, %s; writes %d, %s), merges back %d front %d\n",
		s.Requests.Total, s.Requests.Reads, mib(s.Requests.BytesRead), s.Requests.Writes, mib(s.Requests.BytesWritten),
		s.Merges.Back, s.Merges.Front)
	if s.Requests.NoQueue > 0 || s.Requests.Incomplete > 0 {
		q := s.Requests
		fmt.Fprintf(w, "without a Q %d (in flight at start %d, kernel flushes %d, ends of flush sequences %d), never completed %d",
			q.NoQueue, q.InFlightAtStart, q.KernelFlushes, q.FlushSequenceEnds, q.Incomplete)
		if n := s.Rebuild.Abandoned; n > 0 {
			fmt.Fprintf(w, " (%d closed while in flight: issued over %v before a later event, or beyond %d in flight on their device)",
				n, time.Duration(trace.RebuildInFlightTimeout), trace.RebuildMaxInFlight)
		}
		fmt.Fprintln(w)
	}
	if s.DroppedEvents > 0 || len(s.MissingCPUFiles) > 0 {
		fmt.Fprintf(w, "dropped events %d, missing CPU files %v\n", s.DroppedEvents, s.MissingCPUFiles)
	}
	if s.BFQMaxBudget > 0 {
		fmt.Fprintf(w, "bfq had tuned itself before the trace: max_budget %d sectors (its first recalc_budg message); `replay --bfq-warm max_budget=%d` starts a what-if's BFQ there\n",
			s.BFQMaxBudget, s.BFQMaxBudget)
	}
	fmt.Fprintln(w)

	fmt.Fprintln(tw, "latency\tn\tmin\tavg\tp50\tp99\tmax\t")
	rows := []struct {
		name string
		l    stats.LatencyStats
	}{{"Q2G", s.Latency.Q2G}, {"G2I", s.Latency.G2I}, {"I2D", s.Latency.I2D}, {"D2C", s.Latency.D2C}, {"Q2D", s.Latency.Q2D}, {"Q2C", s.Latency.Q2C}}
	for _, r := range rows {
		if r.l.N == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", r.name, r.l.N, dur(r.l.Min), dur(r.l.Avg), dur(r.l.P50), dur(r.l.P99), dur(r.l.Max))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nseeks Q2Q %d (mean %.1f sectors, median %d), D2D %d (mean %.1f, median %d)\n",
		s.Seeks.Q2Q.NSeeks, s.Seeks.Q2Q.Mean, s.Seeks.Q2Q.Median, s.Seeks.D2D.NSeeks, s.Seeks.D2D.Mean, s.Seeks.D2D.Median)

	if by == "" || by == "cgroup" {
		if len(s.Cgroups) > 0 {
			fmt.Fprintln(w)
			fmt.Fprintln(tw, "cgroup\tpath\trequests\tMiB\tMiB/s\t")
			for _, c := range s.Cgroups {
				fmt.Fprintf(tw, "%d\t%s\t%d\t%.1f\t%.1f\t\n", c.ID, c.Path, c.Requests, float64(c.Bytes)/(1<<20), c.MiBPerS)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	if by == "" || by == "process" {
		fmt.Fprintln(w)
		fmt.Fprintln(tw, "pid\tcomm\trequests\tMiB\tMiB/s\t")
		for _, p := range s.Processes {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%.1f\t%.1f\t\n", p.PID, trace.Printable(p.Comm), p.Requests, float64(p.Bytes)/(1<<20), p.MiBPerS)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if by == "device" {
		fmt.Fprintln(w)
		fmt.Fprintln(tw, "device\trequests\tMiB/s\tD2C avg\tQ2C avg\t")
		for _, d := range s.Devices {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%s\t\n", d.Dev, d.Requests.Total, d.MiBPerS, dur(d.Latency.D2C.Avg), dur(d.Latency.Q2C.Avg))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// dur formats seconds with a unit people read at a glance.
func dur(s float64) string {
	switch {
	case s == 0:
		return "0"
	case s < 1e-3:
		return fmt.Sprintf("%.1fus", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.2fms", s*1e3)
	}
	return fmt.Sprintf("%.3fs", s)
}

// mib formats a byte count in MiB.
func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
