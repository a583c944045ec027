package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracesched/tracesched/manifest"
	"github.com/tracesched/tracesched/record"
)

type recordOptions struct {
	out      string
	duration time.Duration
	maxSize  string
	buffer   string
	noCgroup bool
	noNotify bool
	drain    string
	via      string
	force    bool
	wait     time.Duration
	nice     int
}

func newRecordCmd(ios *IOStreams) *cobra.Command {
	opts := &recordOptions{}
	cmd := &cobra.Command{
		Use:   "record [flags] DEVICE... -o DIR [-- COMMAND ARGS...]",
		Short: "Record a block-layer trace with the context that shaped it (root)",
		Long: `Record traces DEVICE (/dev/sda, sda or 8:0; several may be given) through tracefs with the
ftrace blk tracer's binary stream, the way ../shared/rig/capture.sh does, and writes per-CPU
blktrace files (DIR/DEV.blktrace.N, as blktrace -d names them) that every reader takes,
blkparse included, with manifest.json beside them: kernel, device and queue settings,
scheduler and every tunable, the cgroups the trace touched (id as the trace records it,
BFQ weight, io.weight, io.max), the processes seen with their ioprio and nice, the kernel's
per-cgroup and per-device counters before and after, and a completeness check of the trace
against those counters. Commands that read the capture take their defaults from it.

Recording runs until COMMAND exits, --duration passes, or Ctrl-C (SIGINT, SIGTERM, SIGHUP);
a second signal skips draining the ring buffer. Every tracefs setting it changes is restored
on every way out. It refuses to start when another tracer or trace events are active, or
the device's trace is already enabled (blktrace running; --force resets a stale one).
A capture cut short (a signal while COMMAND ran, --max-size, a write error, lost events,
counts that miss the kernel's) is marked "complete": false with the reasons in the manifest,
and record exits with status 1.

Needs root. Changes on the machine while it runs: the global ftrace tracer (current_tracer=blk,
trace_clock=mono, buffer_size_kb per CPU, trace options bin, context-info, blk_cgroup) and each
DEVICE's /sys/block/DEV/trace; nothing else.`,
		Example: `  # Trace a fio job on a loop device; the job's cgroups and weights land in the manifest
  $ sudo tracesched record /dev/loop0 -o cap -- fio job.fio
  $ tracesched replay cap          # scheduler, weights, tunables from cap/manifest.json

  # Ten seconds of whatever runs on sdb, without cgroup ids (Debian's blkparse reads it)
  $ sudo tracesched record sdb --duration 10s --no-cgroup -o sdb-cap
  $ blkparse -D sdb-cap -i sdb`,
		Args: func(cmd *cobra.Command, args []string) error {
			n := len(args)
			if d := cmd.ArgsLenAtDash(); d >= 0 {
				n = d
			}
			if n < 1 {
				return usagef("record needs at least one DEVICE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			devs, command := args, []string(nil)
			if d := cmd.ArgsLenAtDash(); d >= 0 {
				devs, command = args[:d], args[d:]
			}
			return recordRun(cmd.Context(), ios, opts, devs, command)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.out, "output", "o", "", "output `DIR` (created; per-CPU files and manifest.json)")
	f.DurationVar(&opts.duration, "duration", 0, "stop after `D` (e.g. 30s; default: when COMMAND exits or on Ctrl-C)")
	f.StringVar(&opts.maxSize, "max-size", "", "stop when the trace reaches `SIZE` bytes (K, M, G suffixes); the capture is marked partial")
	f.StringVar(&opts.buffer, "buffer-size", "64M", "ftrace ring buffer `SIZE` per CPU (K, M, G suffixes)")
	f.BoolVar(&opts.noCgroup, "no-cgroup", false, "no cgroup ids in the trace (Debian's blkparse 1.2.0 then reads it)")
	f.BoolVar(&opts.noNotify, "no-messages", false, "no scheduler messages (trace/act_mask without notify)")
	f.StringVar(&opts.drain, "drain", "live", "`live`: read the ring buffer while tracing; after: only once tracing stopped (nothing competes with the workload, the buffer must hold it all)")
	f.StringVar(&opts.via, "via", "ftrace", "`ftrace` (tracefs); blktrace (relay files) is not supported yet")
	f.DurationVar(&opts.wait, "wait", 0, "wait up to `D` for another recorder (holding /tmp/rig/.trace.lock) to finish")
	f.IntVar(&opts.nice, "reader-nice", 0, "nice value `N` (0-19) of the thread that drains the ring buffer: higher yields the CPU to the workload")
	f.BoolVar(&opts.force, "force", false, "reset a device trace found enabled (left by a killed recorder) instead of refusing")
	return cmd
}

// parseSize reads 4096, 64K, 512M, 2G (powers of 1024).
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	if s != "" {
		switch strings.ToUpper(s[len(s)-1:]) {
		case "K":
			mult = 1 << 10
		case "M":
			mult = 1 << 20
		case "G":
			mult = 1 << 30
		}
		if mult > 1 {
			s = strings.TrimSuffix(strings.TrimSuffix(s[:len(s)-1], "i"), "I")
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a size (want a positive number, optionally with K, M or G)", s)
	}
	return n * mult, nil
}

func recordRun(ctx context.Context, ios *IOStreams, opts *recordOptions, devs, command []string) error {
	if opts.out == "" {
		return usagef("record needs -o DIR")
	}
	switch opts.via {
	case "ftrace":
	case "blktrace":
		return usagef("--via blktrace is not supported: this version records through tracefs only (the relay files of BLKTRACESETUP give EPERM in many containers and cloud kernels, which is why it exists); --via ftrace records the same events")
	default:
		return usagef("invalid --via %q: want ftrace", opts.via)
	}
	if opts.drain != "live" && opts.drain != "after" {
		return usagef("invalid --drain %q: want live or after", opts.drain)
	}
	var maxSize int64
	if opts.maxSize != "" {
		n, err := parseSize(opts.maxSize)
		if err != nil {
			return usagef("invalid --max-size: %v", err)
		}
		maxSize = n
	}
	buf, err := parseSize(opts.buffer)
	if err != nil || buf < 4<<10 {
		return usagef("invalid --buffer-size %q: want at least 4K", opts.buffer)
	}
	if opts.nice < 0 || opts.nice > 19 {
		return usagef("invalid --reader-nice %d: want 0 to 19", opts.nice)
	}
	if opts.duration < 0 {
		return usagef("invalid --duration %s", opts.duration)
	}
	if os.Geteuid() != 0 {
		return errors.New("record needs root (tracefs and /sys/block/DEV/trace are root's)")
	}
	// record stops on signals itself, restoring tracefs however long that
	// takes: the run's own cancellation and forced exit stand aside.
	sessionOf(ctx).takeSignals()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	argv := append([]string{"tracesched"}, os.Args[1:]...)
	_, err = record.Run(record.Options{
		Devices: devs, Dir: opts.out, Duration: opts.duration, MaxSize: maxSize, BufferKB: int(buf >> 10),
		NoCgroup: opts.noCgroup, NoNotify: opts.noNotify, Drain: opts.drain, Command: command,
		Stdin: ios.In, Stdout: ios.Out, Stderr: ios.ErrOut, Force: opts.force, Wait: opts.wait, ReaderNice: opts.nice, Log: ios.ErrOut,
		Signals: sigs, Argv: argv,
	})
	return err
}

type manifestOptions struct {
	out   string
	name  string
	since string
	pids  []int
}

func newManifestCmd(ios *IOStreams) *cobra.Command {
	opts := &manifestOptions{}
	cmd := &cobra.Command{
		Use:   "manifest DEVICE -o manifest.json [--since EARLIER.json] [--pid PID]...",
		Short: "Snapshot a device's context into a manifest, for a capture taken with another tool",
		Long: `Manifest writes what record puts in manifest.json, without tracing: kernel, the device
and its queue settings, the scheduler and its tunables, every cgroup of the io hierarchy with
its id as traces record it, weights, io.weight and io.max, and the kernel's per-cgroup and
per-device counters now. Put it beside a capture taken with blktrace (or anything else) and
every command that reads the capture takes its defaults from it.

Run it once before the capture, and once after with --since the first: the second then
holds the counters before (from the first) and after, and their deltas.`,
		Example: `  $ sudo tracesched manifest sda -o before.json
  $ sudo blktrace -d /dev/sda -w 10 -D cap
  $ sudo tracesched manifest sda --since before.json -o cap/manifest.json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.out == "" {
				return usagef("manifest needs -o FILE")
			}
			return manifestRun(ios, opts, args[0])
		},
	}
	cmd.Flags().StringVarP(&opts.out, "output", "o", "", "write the manifest to `FILE` (- for stdout)")
	cmd.Flags().StringVar(&opts.name, "name", "", "capture `NAME` the manifest belongs to (default: the device's name, as blktrace names its files)")
	cmd.Flags().StringVar(&opts.since, "since", "", "an earlier snapshot `FILE`: its counters become the before values")
	cmd.Flags().IntSliceVar(&opts.pids, "pid", nil, "also record `PID`'s comm, ioprio, nice and cgroup (repeatable)")
	return cmd
}

func manifestRun(ios *IOStreams, opts *manifestOptions, dev string) error {
	var since *manifest.Manifest
	if opts.since != "" {
		m, err := manifest.Load(opts.since)
		if err != nil {
			return err
		}
		since = m
	}
	m, err := manifest.Snapshot(manifest.System{Root: "/"}, dev, opts.pids, since)
	if err != nil {
		return err
	}
	if opts.name != "" {
		m.Name = opts.name
	}
	m.Command = strings.Join(append([]string{"tracesched"}, os.Args[1:]...), " ")
	if opts.out == "-" {
		return manifest.Encode(ios.Out, m)
	}
	if err := manifest.Write(opts.out, m); err != nil {
		return err
	}
	fmt.Fprintf(ios.ErrOut, "tracesched manifest: %s: %s, %s, %d cgroups\n", opts.out, m.Device.Name, m.Scheduler, len(m.Cgroups))
	return nil
}
