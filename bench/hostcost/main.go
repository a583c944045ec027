// Command hostcost measures what a request costs the host's CPUs under
// each scheduler, from captures of one job recorded under each (the rig's
// bench/whatif/jobs/hostcost.fio, recorded by bench/whatif/record.sh as
// rig/wi-host-*), and writes the table as a --host file.
//
//	go run ./bench/hostcost bfq+messages=DIR/wi-host-bfq/wi-host-bfq,DIR/wi-host-bfq-2/wi-host-bfq-2 \
//	    bfq=DIR/wi-host-bfq-nomsg/wi-host-bfq-nomsg mq-deadline=DIR/wi-host-mqdl/wi-host-mqdl \
//	    none=DIR/wi-host-none/wi-host-none
//
// Per capture it takes the two measures the replay takes of the capture
// it replays: Workload.SubmitGap (a process's back-to-back Q-to-Q gaps,
// no completion of its own between, the median) and Workload.CompleteGap
// (a CPU's back-to-back C-to-C gaps within 20 us, no Q of that CPU
// between: a completion bunch; the mean). The table's submit_ns and
// complete_ns for a scheduler are their means over its captures, so that
// a replay's source cost (the capture's own measure) and the table's
// ratios are measured alike.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tracesched/tracesched/parse/blktrace"
	"github.com/tracesched/tracesched/replay"
	"github.com/tracesched/tracesched/trace"
)

func main() {
	out := flag.String("o", "", "write the --host table to FILE (default: stdout)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: hostcost [-o FILE] SCHED=CAPTURE[,CAPTURE...] ...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	h := replay.HostCosts{Version: 1, SubmitNS: map[string]int64{}, CompleteNS: map[string]int64{},
		Measured: "bench/hostcost: Workload.SubmitGap and Workload.CompleteGap, the means over each scheduler's captures"}
	for _, arg := range flag.Args() {
		name, paths, ok := strings.Cut(arg, "=")
		if !ok || name == "" || paths == "" {
			fmt.Fprintf(os.Stderr, "hostcost: %q: want SCHED=CAPTURE[,CAPTURE...]\n", arg)
			os.Exit(2)
		}
		var sub, comp trace.Time
		var n int
		for _, path := range strings.Split(paths, ",") {
			w, err := measure(path)
			if err != nil {
				fmt.Fprintln(os.Stderr, "hostcost:", err)
				os.Exit(1)
			}
			fmt.Fprintf(os.Stderr, "%-14s %s: submission %6.2f us (%d gaps), completion %6.2f us (%d gaps)\n",
				name, path, float64(w.SubmitGap)/1e3, w.SubmitGaps, float64(w.CompleteGap)/1e3, w.CompleteGaps)
			if w.SubmitGap <= 0 || w.CompleteGap <= 0 {
				fmt.Fprintf(os.Stderr, "hostcost: %s: too few back-to-back gaps of one kind\n", path)
				os.Exit(1)
			}
			sub, comp, n = sub+w.SubmitGap, comp+w.CompleteGap, n+1
		}
		h.SubmitNS[name] = int64(sub) / int64(n)
		h.CompleteNS[name] = int64(comp) / int64(n)
	}
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		panic(err)
	}
	b = append(b, '\n')
	if *out == "" {
		os.Stdout.Write(b)
		return
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "hostcost:", err)
		os.Exit(1)
	}
}

// measure returns the workload of the capture at path.
func measure(path string) (*replay.Workload, error) {
	in, err := blktrace.Open(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	c := replay.NewCollector()
	for {
		e, err := in.ReadEvent()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		c.Add(&e)
	}
	w, err := c.Workload()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}
